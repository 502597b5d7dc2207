import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as Runtime from "effect/Runtime";
import * as Schedule from "effect/Schedule";
import type * as Scope from "effect/Scope";
import type { EachBatchPayload } from "kafkajs";
import { EncodeError, KafkaIoError, ProcessorError } from "../../../errors.ts";
import type { Processor } from "../../processor.ts";
import { batchHandler } from "./batch-handler.ts";
import { changelogReader } from "./changelog-reader.ts";
import { checkpointer } from "./checkpointer.ts";
import { MemberClient } from "./member-client.ts";
import { advertisingAssigner } from "./advertised-address.ts";
import { memberContext, type BatchError, type KafkaEnvironment } from "./member-context.ts";
import { COMMIT_INTERVAL_MS, offsetCommitter } from "./offset-committer.ts";
import { reconciler } from "./reconciler.ts";
import { recordCollector } from "./record-collector.ts";
import { taskManager } from "./task-manager.ts";

export type { KafkaEnvironment, MemberFailure } from "./member-context.ts";

/** Source partitions one member processes at a time. */
const PARTITIONS_CONCURRENTLY = 3;
/**
 * The longest interval between a member's heartbeats; shorter when a third of the session timeout is (Kafka's advice).
 */
const MAX_HEARTBEAT_INTERVAL_MS = 3_000;

/** What an instance asks a member after its scope closed. */
export interface MemberCommits {
  /** True when the member processed records whose offsets it could not commit. */
  readonly uncommitted: () => boolean;
}

/**
 * One consumer-group member for any processor of topology.ts, for the life of the enclosing scope:
 * it drives the roles (task manager, batch handler, offset committer) from kafkajs' callbacks.
 * Broker and registry failures go back to kafkajs to retry, since that is how a broker restart is
 * survived; a failing processor or encoding fails the instance, since retrying cannot heal a bug.
 */
export function kafkaMember(
  environment: KafkaEnvironment,
  processor: Processor<never>,
): Effect.Effect<MemberCommits, KafkaIoError, Scope.Scope | MemberClient> {
  const { kafka, config, telemetry, logger } = environment;
  return Effect.gen(function* () {
    const client = yield* MemberClient;
    const member = memberContext(environment, processor, config.groupPrefix, client);
    const { name, groupId, sourceTopic } = member;
    const runtime = yield* Effect.runtime<never>();
    const batches = yield* Effect.makeSemaphore(PARTITIONS_CONCURRENTLY);
    /** How often the consumer heartbeats, and how often a batch waiting for its assignment's restore does. */
    const heartbeatInterval = Math.min(MAX_HEARTBEAT_INTERVAL_MS, Math.floor(config.sessionTimeoutMs / 3));
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: config.sessionTimeoutMs,
      rebalanceTimeout: 60_000,
      heartbeatInterval,
      maxWaitTimeInMs: 200,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
      ...(environment.advertisedUrl === undefined
        ? {}
        : { partitionAssigners: [advertisingAssigner(environment.advertisedUrl)] }),
    });

    const offsets = yield* offsetCommitter(member, (toCommit) => consumer.commitOffsets(toCommit));
    const collector = recordCollector(member);
    const checkpoints = checkpointer(member);
    const reader = changelogReader(member, checkpoints);
    const reconcile = reconciler(member, collector);
    const tasks = taskManager(member, { collector, checkpoints, reader, reconcile, offsets });
    const handleBatch = batchHandler(member, { tasks, collector, checkpoints, offsets }, heartbeatInterval);
    let inFlight = 0;
    let stopping = false;
    let ready: Effect.Effect<void, BatchError> = Effect.void;
    let restoring: Fiber.RuntimeFiber<void, BatchError> | undefined;

    consumer.on(consumer.events.COMMIT_OFFSETS, (event) => {
      for (const topic of event.payload.topics) {
        if (topic.topic !== sourceTopic) continue;
        for (const partition of topic.partitions) {
          offsets.committed(Number(partition.partition), String(partition.offset));
        }
      }
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // A rejoin while the consumer leaves (another member stopping at the same time) restores
      // nothing: a restore then would outlive the member's scope and its client.
      if (stopping) return;
      const partitions = event.payload.memberAssignment[sourceTopic] ?? [];
      telemetry.count("agentops_rebalances_total", "Consumer group (re)joins, by processor", { processor: name });
      const assigned = { processor: name, groupId, partitions, instance: config.instanceId, stage: "assigned" };
      logger.info(assigned, "partitions assigned");
      // A rejoin while an earlier assignment is still restoring (its batches heartbeat, so the
      // member stays in the group) restores after it: two restores would share the tasks' stores.
      const previous = restoring;
      const seek = (partition: number, offset: string): void => {
        consumer.seek({ topic: sourceTopic, partition, offset });
      };
      const after = previous === undefined ? Effect.void : Fiber.await(previous);
      restoring = Runtime.runFork(runtime)(
        Effect.andThen(after, tasks.assign(partitions, seek)).pipe(
          // Topics just created may have no leader yet (NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE):
          // what kafkajs marks retriable heals by waiting, so the assignment is restored again.
          Effect.tapError((error) =>
            Effect.sync(() => {
              if (!isRetriable(error)) return;
              const failed = { processor: name, error: error.message };
              logger.warn(failed, "restoring the assignment's state failed; retrying");
            }),
          ),
          Effect.retry({
            schedule: Schedule.intersect(Schedule.spaced("500 millis"), Schedule.recurs(60)),
            while: isRetriable,
          }),
          Effect.tapError((error) =>
            Effect.sync(() => {
              logger.error({ err: error, processor: name }, "restoring the assignment's state failed");
              environment.fail(error);
            }),
          ),
        ),
      );
      ready = Fiber.join(restoring);
    });
    // The group is about to move partitions: what this member acknowledged is committed now, so
    // the next owner does not process it again.
    consumer.on(consumer.events.REBALANCING, () => {
      Runtime.runFork(runtime)(offsets.commitQuietly("rebalance"));
    });
    consumer.on(consumer.events.CRASH, (event) => {
      const help = "Consumer crashes (kafkajs restarts the consumer), by processor";
      telemetry.count("agentops_consumer_crashes_total", help, { processor: name });
      const crashed = { processor: name, error: String(event.payload.error), restart: event.payload.restart };
      logger.warn(crashed, "consumer crashed");
      if (!event.payload.restart) {
        const operation = `${name} consumer (kafkajs will not restart it)`;
        environment.fail(new KafkaIoError({ operation, cause: event.payload.error }));
      }
    });

    const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
      if (stopping) {
        // Shutting down: the batch is left to the next owner, and fetching stops.
        payload.pause();
        return;
      }
      inFlight += 1;
      const handled = batches.withPermits(1)(
        Effect.suspend(() => (stopping ? Effect.succeed(false) : Effect.as(handleBatch(payload, ready), true))),
      );
      const exit = await Runtime.runPromiseExit(runtime)(handled).finally(() => {
        inFlight -= 1;
      });
      if (Exit.isSuccess(exit)) {
        if (exit.value) await payload.heartbeat();
        else payload.pause();
        return;
      }
      const error = Cause.squash(exit.cause);
      if (error instanceof ProcessorError || error instanceof EncodeError) {
        // Retrying the batch cannot heal a bug: stop taking this partition's batches and fail the instance.
        payload.pause();
        logger.error({ err: error, processor: name, partition: payload.batch.partition }, "batch failed");
        environment.fail(error);
        return;
      }
      // The broker or registry: kafkajs retries the batch, and restarts the consumer if that fails.
      throw error;
    };

    const start = Effect.tryPromise({
      try: async () => {
        logger.info({ processor: name, groupId, topic: sourceTopic, stage: "consumer-connect" }, "connecting consumer");
        await consumer.connect();
        await consumer.subscribe({ topic: sourceTopic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS_CONCURRENTLY,
          eachBatch,
        });
        logger.info({ processor: name, groupId, stage: "consumer-running" }, "consumer joined its group and running");
      },
      catch: (cause) => new KafkaIoError({ operation: `start ${name} consumer`, cause }),
    });

    const stop = Effect.gen(function* () {
      logger.info({ processor: name }, "stopping consumer");
      stopping = true;
      // Every permit at once: the batches in flight have finished (their writes acknowledged or
      // failed); a batch that was waiting for a permit then sees `stopping` and leaves its records.
      yield* batches.withPermits(PARTITIONS_CONCURRENTLY)(Effect.void);
      yield* offsets.commitQuietly("shutdown");
      yield* Effect.promise(() => consumer.disconnect().catch(() => undefined));
      yield* tasks.closeAll.pipe(
        Effect.catchAll((error) =>
          Effect.sync(() => {
            logger.warn({ processor: name, error: error.message }, "closing the tasks' local state failed");
          }),
        ),
      );
    });

    yield* Effect.acquireRelease(start, () => stop);
    yield* Effect.forkScoped(Effect.repeat(offsets.commitQuietly("interval"), Schedule.spaced(COMMIT_INTERVAL_MS)));
    return { uncommitted: () => inFlight > 0 || offsets.pending() };
  });
}

/** A broker error kafkajs marks retriable (a leader moving or not yet elected), anywhere along the cause chain. */
function isRetriable(error: unknown): boolean {
  if (!(error instanceof KafkaIoError)) return false;
  let current: unknown = error.cause;
  for (let depth = 0; typeof current === "object" && current !== null && depth < 5; depth += 1) {
    if ((current as { retriable?: unknown }).retriable === true) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
