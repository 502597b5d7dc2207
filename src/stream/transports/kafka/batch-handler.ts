import * as Effect from "effect/Effect";
import * as Schedule from "effect/Schedule";
import type { EachBatchPayload, KafkaMessage } from "kafkajs";
import { KafkaIoError, RegistryError } from "../../../errors.ts";
import { isStageRole } from "../../../partitioned/stage-task.ts";
import { decodeAgentEventRecord } from "../../../kafka/serde/agent-events-record.ts";
import { decodeFact } from "../../../kafka/serde/decode-fact.ts";
import { readEngineFact } from "../../../kafka/serde/engine-facts-record.ts";
import type { EngineFact, SourceRecord, TopicPosition, UnreadableRecord } from "../../processor.ts";
import type { TopicRole } from "../../topic-names.ts";
import type { Checkpointer } from "./checkpointer.ts";
import { processorCall, processorPromise, type BatchError, type MemberContext } from "./member-context.ts";
import { CHECKPOINT_INTERVAL_MS } from "../../processors/checkpoints.ts";
import type { OffsetCommitter } from "./offset-committer.ts";
import type { RecordCollector } from "./record-collector.ts";
import type { TaskManager } from "./task-manager.ts";
import { acknowledged, restore } from "../../runtime/task-capabilities.ts";

/** The part of a kafkajs batch payload a batch's handling uses. */
export type BatchPayload = Pick<EachBatchPayload, "batch" | "heartbeat" | "isRunning" | "isStale" | "resolveOffset">;

/** One fetched batch, from decoding to its writes acknowledged; its offsets are then ready to commit. */
export type BatchHandler = (
  payload: BatchPayload,
  ready: Effect.Effect<void, BatchError>,
) => Effect.Effect<void, BatchError>;

export interface BatchRoles {
  readonly tasks: TaskManager;
  readonly collector: RecordCollector;
  readonly checkpoints: Pick<Checkpointer, "checkpointStores">;
  readonly offsets: Pick<OffsetCommitter, "acknowledge">;
}

/** How the records of each source topic are decoded for its processor. */
export function sourceDecoder(member: MemberContext, role: TopicRole): (message: KafkaMessage) => Promise<unknown> {
  if (role === "engineFacts" || role === "stageFacts") {
    return (message) =>
      Promise.resolve(
        message.value === null ? { unreadable: "a record without a value" } : decodeToEngineFact(message.value),
      );
  }
  // The partitioned engine's stage topics: the stage decodes its records itself (its key names their kind).
  if (isStageRole(role)) {
    return (message) =>
      Promise.resolve(
        message.key === null
          ? { unreadable: "a stage record without a key" }
          : { key: message.key.toString("utf8"), value: message.value },
      );
  }
  // Agent events forwarded by ingest are in the internal layout (read without validating again);
  // producers that publish agent events directly use the registry's Avro (validated here, once).
  const { registry } = member.environment;
  if (role === "agentEvents") return (message) => decodeAgentEventRecord(registry, message.value);
  return (message) => decodeFact(registry, message.value);
}

/** An engine-facts record as the engine reads it: the fact with where ingest read it, or why it cannot be read. */
function decodeToEngineFact(value: Buffer): EngineFact | UnreadableRecord {
  const reading = readEngineFact(value);
  return reading.ok ? { fact: reading.fact, source: reading.source } : { unreadable: reading.detail };
}

export function batchHandler(member: MemberContext, roles: BatchRoles, heartbeatInterval: number): BatchHandler {
  const { environment, name, node, sourceTopic } = member;
  const { logger, telemetry } = environment;
  const { tasks, collector, checkpoints, offsets } = roles;
  const decode = sourceDecoder(member, node.source);

  const decodeBatch = (payload: BatchPayload): Effect.Effect<SourceRecord<unknown>[], RegistryError> =>
    Effect.tryPromise({
      try: async () => {
        const { batch } = payload;
        const records: SourceRecord<unknown>[] = [];
        for (const message of batch.messages) {
          if (!payload.isRunning() || payload.isStale()) break;
          const position = { topic: batch.topic, partition: batch.partition, offset: message.offset };
          const original = { key: message.key, value: message.value };
          records.push({ position, value: await decode(message), original });
        }
        return records;
      },
      catch: (cause) => new RegistryError({ operation: `decode ${sourceTopic} records`, cause }),
    });

  /**
   * Waits for the assignment's restore while heartbeating. kafkajs heartbeats only between batches,
   * and the first batch waits for the restore: a restore longer than the session timeout would get
   * the member removed from its group, and the rejoin would restore again, for ever. A heartbeat
   * that fails (the group is rebalancing) fails the batch, which makes kafkajs rejoin.
   */
  const awaitRestore = (
    ready: Effect.Effect<void, BatchError>,
    payload: BatchPayload,
  ): Effect.Effect<void, BatchError> => {
    const heartbeats = Effect.tryPromise({
      try: () => payload.heartbeat(),
      catch: (cause) => new KafkaIoError({ operation: `heartbeat ${name} while restoring`, cause }),
    }).pipe(
      Effect.repeat(Schedule.spaced(`${heartbeatInterval} millis`)),
      Effect.delay(`${heartbeatInterval} millis`),
      Effect.andThen(Effect.never),
    );
    return Effect.raceFirst(ready, heartbeats);
  };

  return (payload, ready) =>
    Effect.gen(function* () {
      yield* awaitRestore(ready, payload);
      const { batch } = payload;
      const entry = tasks.task(batch.partition);
      if (entry === undefined) return;
      // A batch fetched before the assignment's seek took effect (from the group's committed offset)
      // is stale: decodeBatch stops at it, so a task resuming from its checkpoint reads from there.
      const records = yield* decodeBatch(payload);
      const last = records.at(-1);
      if (last === undefined) return;
      const lastOffset = (last.position as TopicPosition).offset;
      let live = records;
      if (entry.restoreEnd !== undefined) {
        const end = entry.restoreEnd;
        const restoring = records.filter((record) => BigInt((record.position as TopicPosition).offset) < end);
        live = records.slice(restoring.length);
        const restored = yield* processorCall(name, () => restore(entry.task, restoring));
        if (restored.outputs.length > 0) {
          yield* collector.settleAndWrite(entry, batch.partition, restored);
        }
        if (BigInt(lastOffset) + 1n >= end) {
          const started = entry.restoreStarted;
          const replayed = started === undefined ? end : end - started.offset;
          const seconds = started === undefined ? 0 : (performance.now() - started.at) / 1000;
          const rate = seconds > 0 ? Math.round(Number(replayed) / seconds) : null;
          const ended = { processor: name, partition: batch.partition, records: replayed.toString() };
          const timing = { seconds: Number(seconds.toFixed(3)), recordsPerSecond: rate };
          logger.info({ ...ended, ...timing, stage: "restore-end" }, "source replayed into the processor's state");
          yield* tasks.goLive(entry, batch.partition);
        }
      }
      if (live.length > 0 || entry.restoreEnd === undefined) {
        const backlog = Number(BigInt(batch.highWatermark) - BigInt(lastOffset) - 1n);
        const batchOf = { partition: batch.partition, records: live, backlog };
        const result = yield* processorCall(name, () => entry.task.process(batchOf));
        yield* collector.settleAndWrite(entry, batch.partition, result);
      }
      // The assignment moved while this batch was in flight (a rebalance restored the partition
      // into a new task, or took it away): the old task is closed, and neither it nor the group's
      // offsets may hear of this batch; its writes are upserts the next owner rewrites.
      if (tasks.task(batch.partition) !== entry) {
        const left = { processor: name, partition: batch.partition, offset: lastOffset };
        logger.info(left, "a batch of a revoked assignment finished; its offsets are left to the partition's new task");
        return;
      }
      payload.resolveOffset(lastOffset);
      const nextOffset = String(BigInt(lastOffset) + 1n);
      // The batch's writes are acknowledged: the task may checkpoint its local state up to here.
      yield* processorPromise(name, () => acknowledged(entry.task, nextOffset));
      if (performance.now() - entry.storesCheckpointedAt >= CHECKPOINT_INTERVAL_MS) {
        yield* checkpoints.checkpointStores(entry);
      }
      offsets.acknowledge(batch.partition, nextOffset);
      const help = "Records processed, by processor";
      telemetry.count("agentops_records_processed_total", help, { processor: name }, records.length);
      const lag = Number(BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n);
      tasks.reportLag(batch.partition, Math.max(0, lag));
    });
}
