import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import * as Effect from "effect/Effect";
import type { Kafka } from "kafkajs";
import type { Logger } from "pino";
import type { EncodeError, KafkaIoError, RegistryError } from "../../../errors.ts";
import { ProcessorError } from "../../../errors.ts";
import type { TopicSerde } from "../../../kafka/serde/topic-serde.ts";
import type { Processor, SinkRecord, Task } from "../../processor.ts";
import type { ChangelogWrite, TaskStores } from "../../runtime/task-writes.ts";
import type { StreamConfig } from "../../runtime/stream-config.ts";
import type { Telemetry } from "../../runtime/telemetry.ts";
import { TOPOLOGY, type ProcessorName } from "../../topology.ts";
import type { TopicNames } from "../../topic-names.ts";
import type { MemberClientShape } from "./member-client.ts";

/** What every member of one instance shares. */
export interface KafkaEnvironment {
  readonly kafka: Kafka;
  readonly registry: SchemaRegistry;
  readonly serde: TopicSerde;
  readonly topics: TopicNames;
  readonly config: StreamConfig;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  /** The partitioned engine's partition count (topics.json): where ingest places a fact on the stage facts topic. */
  readonly enginePartitions: number;
  /** This member's HTTP address, advertised in its group metadata (advertised-address.ts). */
  readonly advertisedUrl?: string;
  /**
   * Declares the instance broken (a consumer kafkajs will not restart, a failing processor or
   * encoding): /healthz turns 503 and `agentops run` exits 1, so a supervisor restarts the instance.
   */
  readonly fail: (error: MemberFailure) => void;
}

/** The failures that stop an instance: retrying the batch cannot heal them. */
export type MemberFailure = ProcessorError | EncodeError | KafkaIoError | RegistryError;

/**
 * What handling one fetched batch can fail with: the broker or registry (kafkajs retries the
 * batch), or a bug (fatal).
 */
export type BatchError = KafkaIoError | RegistryError | ProcessorError | EncodeError;

/** What the roles of one member read: its processor, where it sits in the topology, and its client. */
export interface MemberContext {
  readonly environment: Pick<
    KafkaEnvironment,
    "registry" | "serde" | "topics" | "logger" | "telemetry" | "enginePartitions"
  >;
  readonly processor: Processor<never>;
  readonly name: ProcessorName;
  readonly node: (typeof TOPOLOGY)[ProcessorName];
  readonly sourceTopic: string;
  readonly groupId: string;
  readonly client: MemberClientShape;
}

export function memberContext(
  environment: MemberContext["environment"],
  processor: Processor<never>,
  groupPrefix: string,
  client: MemberClientShape,
): MemberContext {
  const name: ProcessorName = processor.name;
  const node = TOPOLOGY[name];
  const sourceTopic = environment.topics[node.source];
  return { environment, processor, name, node, sourceTopic, groupId: `${groupPrefix}.${name}`, client };
}

/** One source partition's task and what the member tracks about it. */
export interface PartitionTask {
  readonly task: Task<unknown>;
  readonly stores: TaskStores;
  /** Offset (exclusive) up to which the source is replayed into the task's state; undefined once live. */
  restoreEnd: bigint | undefined;
  /** When the replay began and from which offset, for its rate. */
  restoreStarted: { readonly at: number; readonly offset: bigint } | undefined;
  /** A batch's writes whose send failed, sent again before the next batch's. */
  unsent: { readonly outputs: readonly SinkRecord[]; readonly changelog: readonly ChangelogWrite[] } | undefined;
  /** The stores hold writes not yet acknowledged on their changelogs: they may not be checkpointed. */
  storesAhead: boolean;
  /** When the stores that keep their contents (on disk) were last checkpointed. */
  storesCheckpointedAt: number;
}

/** Runs a processor's code, turning what it throws into the processor's typed failure. */
export function processorCall<A>(processor: ProcessorName, call: () => A): Effect.Effect<A, ProcessorError> {
  return Effect.try({ try: call, catch: (cause) => new ProcessorError({ processor, cause }) });
}

/** Runs a processor's asynchronous code, turning what it rejects with into the processor's typed failure. */
export function processorPromise<A>(
  processor: ProcessorName,
  call: () => Promise<A>,
): Effect.Effect<A, ProcessorError> {
  return Effect.tryPromise({ try: call, catch: (cause) => new ProcessorError({ processor, cause }) });
}
