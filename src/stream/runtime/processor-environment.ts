import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { Context } from "effect";
import type { Kafka, TopicMessages } from "kafkajs";
import type { Logger } from "pino";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { TopicSerde } from "../../kafka/serde/topic-serde.ts";
import type { StreamConfig } from "./stream-config.ts";
import type { Telemetry } from "./telemetry.ts";
import type { TopicNames } from "../topic-names.ts";

/**
 * Whether a role has started a batch whose offsets it has not committed yet (updated by the
 * runtime around every batch), so a shutdown can say whether it committed what was processed.
 */
export interface CommitState {
  uncommitted: boolean;
}

/** What every processor of one instance shares: clients, encodings, topic names, telemetry. */
export interface ProcessorEnvironment {
  readonly kafka: Kafka;
  /**
   * Sends through the role's own idempotent producer, in bounded requests, to the sinks
   * topology.ts declares for the role; a write anywhere else is refused (the description cannot
   * drift from what the processor does).
   */
  readonly send: (topicMessages: readonly TopicMessages[]) => Promise<void>;
  /** The role's own commit state. */
  readonly commitState: CommitState;
  readonly registry: SchemaRegistry;
  readonly serde: TopicSerde;
  readonly topics: TopicNames;
  readonly config: StreamConfig;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly catalog: CatalogSummary;
  /**
   * Declares the instance broken (a consumer that kafkajs will not restart): /healthz turns 503
   * and `agentops run` stops with exit code 1, so a supervisor restarts the whole instance
   * instead of it running on with a dead role.
   */
  readonly fail: (reason: string) => void;
}

export class Processors extends Context.Tag("agentops/Processors")<Processors, ProcessorEnvironment>() {}
