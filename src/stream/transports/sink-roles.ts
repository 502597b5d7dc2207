import type { Message } from "kafkajs";
import { deadLetterKey } from "../../contract/dead-letter.ts";
import { encodeAgentEvent } from "../../kafka/serde/agent-events-record.ts";
import { encodeEngineFact } from "../../kafka/serde/engine-facts-record.ts";
import type { TopicSerde } from "../../kafka/serde/topic-serde.ts";
import { partitionOf } from "../../kafka/key-partitioner.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import type { RunStateSummary, TripwireAlert } from "../../tripwires/index.ts";
import { InvariantError } from "../../errors.ts";
import type { AgentEventRecord, DeadLetter, EngineFact, SinkRecord } from "../processor.ts";
import type { StageInput } from "../processors/engine-stages.ts";
import { countDeadLetter } from "../runtime/task-writes.ts";
import type { Telemetry } from "../runtime/telemetry.ts";
import type { STAGE_TOPIC_ROLES, TopicRole } from "../topic-names.ts";
import { deadLetterRecord, topicPosition, writerHeader } from "./kafka/sink-encoding.ts";

/**
 * How each topic role's sink record leaves a processor, on both transports, in one table: the
 * partition it is placed on, its Kafka message, and where the embedded transport delivers it. A
 * role is added here once, and neither transport can forget it.
 */

/** What placing and encoding a sink record needs besides the record. */
export interface SinkContext {
  readonly telemetry: Telemetry;
  /** The partitioned engine's partition count: where a fact is placed on the stage facts topic. */
  readonly enginePartitions: number;
}

/** What the Kafka transport's encoding needs: the Avro serde of the public topics. */
export interface KafkaSinkContext extends SinkContext {
  readonly serde: TopicSerde;
}

/** The partitioned engine's logs between stages (and its facts log), read by a stage processor. */
export type StageLogRole = (typeof STAGE_TOPIC_ROLES)[number];

/** Where the embedded transport keeps each role's records: in-process logs and the collected sinks. */
export interface EmbeddedTargets {
  readonly deadLetter: (letter: DeadLetter) => void;
  readonly engineFact: (fact: EngineFact) => void;
  readonly agentEvent: (record: AgentEventRecord) => void;
  readonly stageLog: (role: StageLogRole, partition: number, value: EngineFact | StageInput) => void;
  readonly result: (key: string, result: MetricResult | null) => void;
  readonly alert: (alert: TripwireAlert) => void;
  readonly runState: (key: string, summary: RunStateSummary) => void;
}

type SinkOf<R extends TopicRole> = Extract<SinkRecord, { readonly topic: R }>;

/** A Kafka message without its partition (the table's `partition` places it). */
type Encoded = Omit<Message, "partition">;

interface SinkRole<S extends SinkRecord> {
  /** The partition the role places a record on; absent, the key's hash places it. */
  readonly partition?: (record: S, context: SinkContext) => number;
  readonly toKafka: (record: S, context: KafkaSinkContext) => Encoded | Promise<Encoded>;
  /** Delivers the record in process; `partition` is what `partition` placed it on (0 when the role does not place). */
  readonly toEmbedded: (record: S, targets: EmbeddedTargets, partition: number) => void;
}

/** A role written as a store's changelog (or read only): a processor that returns it has a bug. */
function notAnOutput(role: TopicRole): SinkRole<SinkRecord> {
  const refuse = (): never => {
    throw new InvariantError({ problem: `${role} is written as a store's changelog, not as a processor's output` });
  };
  return { toKafka: refuse, toEmbedded: refuse };
}

/** The partitioned engine's records between stages: encoded by their stage, placed on the partition it names. */
const STAGE_ROLE: SinkRole<SinkOf<"stageClaims" | "stageEntities" | "stagePartials">> = {
  partition: (record) => record.value.partition,
  toKafka: (record) => ({ key: record.key, value: record.value.value, headers: writerHeader(record.writer) }),
  toEmbedded: (record, targets, partition) =>
    targets.stageLog(record.topic, partition, { key: record.key, value: record.value.value }),
};

const SINK_ROLES: { readonly [R in TopicRole]: SinkRole<SinkOf<R>> } = {
  facts: notAnOutput("facts"),
  runMonitorChangelog: notAnOutput("runMonitorChangelog"),
  deadLetters: {
    toKafka: async (record, context) => {
      const letter = deadLetterRecord(record.value);
      return { key: deadLetterKey(letter), value: await context.serde.encodeDeadLetter(letter) };
    },
    toEmbedded: (record, targets) => targets.deadLetter(record.value),
  },
  agentEvents: {
    toKafka: (record) => ({ key: record.key, value: encodeAgentEvent(record.value.event) }),
    toEmbedded: (record, targets) => targets.agentEvent(record.value),
  },
  // The single engine's topic has one partition by design (naming it skips the key hash per record).
  engineFacts: {
    partition: () => 0,
    toKafka: (record) => encodeEngineFact(record.value.fact, topicPosition(record.value.source)),
    toEmbedded: (record, targets) => targets.engineFact(record.value),
  },
  // The partitioned engine's facts are placed by fact_id, with the stages' own placement.
  stageFacts: {
    partition: (record, context) => partitionOf(record.value.fact.fact_id, context.enginePartitions),
    toKafka: (record) => encodeEngineFact(record.value.fact, topicPosition(record.value.source)),
    toEmbedded: (record, targets, partition) => targets.stageLog("stageFacts", partition, record.value),
  },
  // Partitioned like the engine-facts topic it accompanies; it restores a later member, and a replay has none.
  engineContributions: {
    partition: () => 0,
    toKafka: (record) => ({ key: record.key, value: record.value }),
    toEmbedded: () => undefined,
  },
  stageClaims: STAGE_ROLE,
  stageEntities: STAGE_ROLE,
  stagePartials: STAGE_ROLE,
  alerts: {
    toKafka: async (record, context) => ({ key: record.key, value: await context.serde.encodeAlert(record.value) }),
    toEmbedded: (record, targets) => targets.alert(record.value),
  },
  runState: {
    toKafka: (record) => ({ key: record.key, value: JSON.stringify(record.value) }),
    toEmbedded: (record, targets) => targets.runState(record.key, record.value),
  },
  // The single engine writes results through its published-results store; the partitioned engine's
  // aggregation stage writes them itself, naming its partition.
  results: {
    toKafka: async (record, context) => {
      const headers = writerHeader(record.writer);
      return {
        key: record.key,
        value: record.value === null ? null : await context.serde.encodeResult(record.value),
        headers,
      };
    },
    toEmbedded: (record, targets) => targets.result(record.key, record.value),
  },
};

/** The table's entry for a record's role, typed for the whole union (each entry takes its own role's records). */
function roleOf(output: SinkRecord): SinkRole<SinkRecord> {
  return SINK_ROLES[output.topic] as SinkRole<SinkRecord>;
}

function countOutput(context: SinkContext, output: SinkRecord): void {
  if (output.topic === "deadLetters") countDeadLetter(context.telemetry, output.value);
}

/** A sink record as a Kafka message, in the form its topic carries. */
export async function encodeOutput(context: KafkaSinkContext, output: SinkRecord): Promise<Message> {
  const role = roleOf(output);
  countOutput(context, output);
  const message = await role.toKafka(output, context);
  return role.partition === undefined ? message : { ...message, partition: role.partition(output, context) };
}

/** A sink record delivered to the embedded transport's in-process logs and sinks. */
export function deliverOutput(context: SinkContext, targets: EmbeddedTargets, output: SinkRecord): void {
  const role = roleOf(output);
  countOutput(context, output);
  role.toEmbedded(output, targets, role.partition?.(output, context) ?? 0);
}
