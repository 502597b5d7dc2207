import * as Effect from "effect/Effect";
import type { Task } from "../../processor.ts";
import { closeTask, goLivePages, resumeFrom } from "../../runtime/task-capabilities.ts";
import { closeTaskStores, storeSet } from "../../runtime/task-writes.ts";
import type { ChangelogReader } from "./changelog-reader.ts";
import type { Checkpointer } from "./checkpointer.ts";
import {
  processorCall,
  processorPromise,
  type BatchError,
  type MemberContext,
  type PartitionTask,
} from "./member-context.ts";
import type { OffsetCommitter } from "./offset-committer.ts";
import type { CollectorError, RecordCollector } from "./record-collector.ts";
import type { Reconciler } from "./reconciler.ts";

/** Where the group consumer reads a source partition from next. */
export type Seek = (partition: number, offset: string) => void;

/** The member's tasks, one per assigned source partition: opened over restored state, live, closed. */
export interface TaskManager {
  readonly task: (partition: number) => PartitionTask | undefined;
  /**
   * A new assignment: its tasks over restored stores. A processor whose source is its changelog
   * resumes from its task's checkpoint (live at once when the checkpoint was live), or replays the
   * source from offset 0.
   */
  readonly assign: (partitions: readonly number[], seek: Seek) => Effect.Effect<void, BatchError>;
  /** The rebuilt state's table written through the restored stores: only what differs is written. */
  readonly goLive: (entry: PartitionTask, partition: number) => Effect.Effect<void, CollectorError>;
  /** Reports a partition's consumer lag after a batch. */
  readonly reportLag: (partition: number, lag: number) => void;
  /** Releases the tasks' local state (a revoked assignment, or shutdown). */
  readonly closeAll: Effect.Effect<void, BatchError>;
}

export interface TaskManagerRoles {
  readonly collector: RecordCollector;
  readonly checkpoints: Checkpointer;
  readonly reader: ChangelogReader;
  readonly reconcile: Reconciler;
  readonly offsets: Pick<OffsetCommitter, "retain">;
}

export function taskManager(member: MemberContext, roles: TaskManagerRoles): TaskManager {
  const { environment, processor, name, node, sourceTopic } = member;
  const { topics, logger, telemetry } = environment;
  const { collector, checkpoints, reader, reconcile, offsets } = roles;
  const replaysSource = node.stores.some((store) => store.restore === "source");
  const logRole = node.stores.find((store) => store.restore === "source")?.log;
  const tasks = new Map<number, PartitionTask>();
  /** Source partitions whose lag this member has reported. */
  const lagReported = new Set<number>();
  const lagHelp = "Records behind the partition's high watermark after the last batch";
  const reportLag = (partition: number, lag: number): void => {
    const labels = { processor: name, topic: sourceTopic, partition: String(partition) };
    telemetry.gauge("agentops_consumer_lag", lagHelp, labels, lag);
  };

  const goLive: TaskManager["goLive"] = (entry, partition) =>
    Effect.gen(function* () {
      entry.restoreEnd = undefined;
      const pages = yield* processorCall(name, () => goLivePages(entry.task)[Symbol.iterator]());
      let results = 0;
      let upserts = 0;
      let tombstones = 0;
      for (;;) {
        // The task renders a page only when asked (its code runs here), so a failure is the task's.
        const page = yield* processorCall(name, () => pages.next());
        if (page.done === true) break;
        const written = yield* collector.settleAndWrite(entry, partition, page.value);
        results += page.value.outputs.filter((output) => output.topic === "results" && output.value !== null).length;
        const pageUpserts = written.filter((change) => change.value !== null).length;
        upserts += pageUpserts;
        tombstones += written.length - pageUpserts;
      }
      yield* reconcile(entry, partition);
      const live = { processor: name, partition, results, upserts, tombstones, stage: "live" };
      logger.info(live, `${name} state rebuilt; results reconciled; live`);
    });

  const closeAll: TaskManager["closeAll"] = Effect.gen(function* () {
    const open = [...tasks.values()];
    tasks.clear();
    for (const entry of open) {
      yield* processorPromise(name, () => closeTask(entry.task));
      // Stopping cleanly, the stores' last acknowledged contents are checkpointed (a failure only
      // means the next start reads more of the changelog).
      yield* checkpoints.checkpointStores(entry).pipe(
        Effect.catchAll((error) =>
          Effect.sync(() => {
            const failed = { processor: name, error: error.message };
            const consequence = "the next start reads their changelogs from the last checkpoint";
            logger.warn(failed, `checkpointing the stores on disk failed; ${consequence}`);
          }),
        ),
      );
      yield* processorPromise(name, () => closeTaskStores(entry.stores));
    }
  });

  const assign: TaskManager["assign"] = (partitions, seek) =>
    Effect.gen(function* () {
      yield* closeAll;
      for (const partition of [...lagReported]) {
        if (partitions.includes(partition)) continue;
        // Another member reports this partition's lag now: a gauge left at its last value would read as lag for ever.
        reportLag(partition, 0);
        lagReported.delete(partition);
      }
      offsets.retain(partitions);
      const storesByPartition = yield* reader.readChangelogs(partitions);
      const unread = { ends: new Map<number, bigint>(), committed: new Map<number, bigint>() };
      const positions = replaysSource ? yield* reader.sourcePositions : unread;
      for (const [partition, stores] of storesByPartition) {
        const task = yield* processorCall(
          name,
          () => processor.open(partition, storeSet(stores), telemetry, checkpoints.taskContext) as Task<unknown>,
        );
        const entry: PartitionTask = {
          task,
          stores,
          restoreEnd: undefined,
          restoreStarted: undefined,
          unsent: undefined,
          storesAhead: false,
          storesCheckpointedAt: performance.now(),
        };
        tasks.set(partition, entry);
        if (!replaysSource) continue;
        const end = positions.ends.get(partition) ?? 0n;
        const from = yield* processorCall(name, () => resumeFrom(task, end.toString()));
        if (from === "0" && logRole !== undefined && task.changelogLoad !== undefined) {
          yield* reader.loadLog(task.changelogLoad, partition, topics[logRole]);
        }
        const start = BigInt(from);
        // The source is replayed silently up to what the group committed (every write of the batches
        // before it was acknowledged: their results and dead letters are on their topics), or to the
        // end when nothing was committed; from there on it is processed live. So records whose
        // writes a crash may have lost are processed live again (at-least-once), never skipped.
        const committedAt = positions.committed.get(partition);
        const restoreEnd =
          committedAt === undefined ? end : committedAt < start ? start : committedAt > end ? end : committedAt;
        // The task's own checkpoint decides where to read, whatever position the group would resume from.
        seek(partition, from);
        entry.restoreEnd = restoreEnd;
        entry.restoreStarted = { at: performance.now(), offset: start };
        const resumed = { processor: name, partition, restoreEnd: restoreEnd.toString() };
        if (start > 0n) {
          const resume = { ...resumed, offset: from, end: end.toString(), stage: "resume" };
          logger.info(resume, `${name} state resumed from its local checkpoint`);
        } else {
          logger.info({ ...resumed, from, stage: "restore-begin" }, `rebuilding ${name} state from its input topic`);
        }
        if (start >= restoreEnd) yield* goLive(entry, partition);
      }
    });

  return {
    task: (partition) => tasks.get(partition),
    assign,
    goLive,
    reportLag: (partition, lag) => {
      reportLag(partition, lag);
      lagReported.add(partition);
    },
    closeAll,
  };
}
