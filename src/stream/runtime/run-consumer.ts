import { Effect, type Scope } from "effect";
import type { Consumer, EachBatchPayload } from "kafkajs";
import { KafkaIoError } from "./errors.ts";
import { startupStage } from "./startup-stage.ts";
import type { ProcessorName } from "../topology.ts";
import type { ProcessorEnvironment } from "./processor-environment.ts";

export interface ConsumerSpec {
  readonly role: ProcessorName;
  readonly topic: string;
  readonly fromBeginning: boolean;
  /** When false nothing is committed: the engine always rebuilds from offset 0 on assignment. */
  readonly commitOffsets?: boolean;
  readonly eachBatch: (payload: EachBatchPayload) => Promise<void>;
  /** Called on every (re)assignment with this member's partitions of the topic. */
  readonly onAssignment?: (partitions: readonly number[], consumer: Consumer) => Promise<void> | void;
}

/**
 * Runs one consumer-group member for the life of the enclosing scope: connect, subscribe, run,
 * and on scope close a clean disconnect (kafkajs finishes the batch in flight). The runtime, not
 * the processor, commits: after a batch's handler has resolved its offsets (its outputs
 * acknowledged), they are committed here, and the role's `commitState` says whether that succeeded. kafkajs restarts a crashed consumer itself (restartOnFailure), which is how a
 * broker restart is survived; rebalances and lag are counted for /metrics.
 */
export function runConsumer(environment: ProcessorEnvironment, spec: ConsumerSpec): Effect.Effect<Consumer, KafkaIoError, Scope.Scope> {
  const { kafka, config, telemetry, logger } = environment;
  const groupId = `${config.groupPrefix}.${spec.role}`;
  const acquire = Effect.gen(function* () {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, rebalanceTimeout: 60_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 200, retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 } });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const partitions = event.payload.memberAssignment[spec.topic] ?? [];
      telemetry.count("agentops_rebalances_total", "Consumer group (re)joins, by processor", { processor: spec.role });
      logger.info({ processor: spec.role, groupId, partitions, instance: config.instanceId }, "partitions assigned");
      void Promise.resolve(spec.onAssignment?.(partitions, consumer)).catch((error: unknown) => logger.error({ err: error, processor: spec.role }, "assignment handler failed"));
    });
    consumer.on(consumer.events.CRASH, (event) => {
      telemetry.count("agentops_consumer_crashes_total", "Consumer crashes (kafkajs restarts the consumer), by processor", { processor: spec.role });
      logger.warn({ processor: spec.role, error: String(event.payload.error), restart: event.payload.restart }, "consumer crashed");
      if (!event.payload.restart) environment.fail(`${spec.role} consumer crashed and will not restart: ${String(event.payload.error)}`);
    });
    // Each step its own start-up stage: a group join may wait a whole rebalance (or a departed
    // member's session timeout), and the log must say that this is what it waits for.
    const step = (stage: string, run: () => Promise<void>): Effect.Effect<void, KafkaIoError> =>
      startupStage(logger, `${spec.role} consumer: ${stage}`, Effect.tryPromise({ try: run, catch: (cause) => new KafkaIoError({ operation: `${stage} (${spec.role} consumer)`, cause }) }));
    yield* step("connect", () => consumer.connect());
    yield* step("subscribe", () => consumer.subscribe({ topic: spec.topic, fromBeginning: spec.fromBeginning }));
    // Resolves once the member joined the group (or crashed: logged as such, kafkajs restarts it).
    yield* step(`join group ${groupId}`, () => consumer.run({
      autoCommit: spec.commitOffsets ?? true,
      eachBatchAutoResolve: false,
      // Partitions are independent (ingest is stateless, run monitors are per partition): while one
      // batch waits for its produce acknowledgements, the next partition's batch is decoded.
      partitionsConsumedConcurrently: 3,
      eachBatch: async (payload) => {
        const commits = spec.commitOffsets ?? true;
        if (commits) environment.commitState.uncommitted = true;
        await spec.eachBatch(payload);
        if (commits) {
          await payload.commitOffsetsIfNecessary();
          environment.commitState.uncommitted = false;
        }
        const last = payload.batch.lastOffset();
        const lag = Number(BigInt(payload.batch.highWatermark) - BigInt(last) - 1n);
        telemetry.gauge("agentops_consumer_lag", "Records behind the partition's high watermark after the last batch", { processor: spec.role, topic: spec.topic, partition: String(payload.batch.partition) }, Math.max(0, lag));
      },
    }));
    return consumer;
  });
  return Effect.acquireRelease(acquire, (consumer) =>
    Effect.promise(async () => {
      logger.info({ processor: spec.role }, "stopping consumer");
      await consumer.disconnect().catch(() => undefined);
    }),
  );
}
