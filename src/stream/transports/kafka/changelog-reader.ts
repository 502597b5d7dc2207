import * as Effect from "effect/Effect";
import type { RegistryError } from "../../../errors.ts";
import { KafkaIoError, ProcessorError } from "../../../errors.ts";
import type { ChangelogLoad } from "../../processor.ts";
import { closeTaskStores, createTaskStores, type TaskStores } from "../../runtime/task-writes.ts";
import type { Checkpointer } from "./checkpointer.ts";
import { processorCall, type MemberContext } from "./member-context.ts";

/** Where the source stands for this member's group, per source partition. */
export interface SourcePositions {
  readonly ends: Map<number, bigint>;
  /** The group's committed offsets (absent: nothing committed). */
  readonly committed: Map<number, bigint>;
}

/** Restores an assignment's state: its stores from their changelogs, or a task's contributions log. */
export interface ChangelogReader {
  /** New stores for the partitions, filled from their changelogs (released again if that fails). */
  readonly readChangelogs: (
    partitions: readonly number[],
  ) => Effect.Effect<Map<number, TaskStores>, KafkaIoError | RegistryError | ProcessorError>;
  readonly sourcePositions: Effect.Effect<SourcePositions, KafkaIoError>;
  /** A task without local state loads its contributions log (this partition of it) before reading its source. */
  readonly loadLog: (
    log: ChangelogLoad,
    partition: number,
    logTopic: string,
  ) => Effect.Effect<void, KafkaIoError | ProcessorError>;
}

export function changelogReader(
  member: MemberContext,
  checkpoints: Pick<Checkpointer, "tableFormat">,
): ChangelogReader {
  const { environment, processor, name, node, sourceTopic, groupId, client } = member;
  const { topics, logger } = environment;

  const readChangelogs: ChangelogReader["readChangelogs"] = (partitions) =>
    Effect.gen(function* () {
      const storesByPartition = new Map<number, TaskStores>();
      /** Stores not yet handed to a task are released if the restore fails (those on disk hold a directory). */
      const release = Effect.promise(async () => {
        for (const stores of storesByPartition.values()) await closeTaskStores(stores).catch(() => undefined);
      });
      const fill = Effect.gen(function* () {
        for (const partition of partitions) {
          storesByPartition.set(partition, yield* processorCall(name, () => createTaskStores(processor, partition)));
        }
        for (const spec of node.stores) {
          if (spec.restore === "source") continue;
          const changelogTopic = topics[spec.changelog];
          const started = performance.now();
          // Each task's store says where its changelog is read from (a store on disk reflects what
          // lies before its checkpoint); the topic is read from the earliest of them.
          const endOffsets = yield* Effect.tryPromise({
            try: () => client.topicEnds(changelogTopic),
            catch: (cause) => new KafkaIoError({ operation: `read ${changelogTopic} end offsets`, cause }),
          });
          const format = yield* checkpoints.tableFormat(spec);
          const starts = new Map(
            [...storesByPartition].map(([partition, stores]) => {
              const start = stores.byName.get(spec.name)?.changelogStart(endOffsets, format);
              return [partition, start ?? new Map<number, bigint>()] as const;
            }),
          );
          const from = new Map<number, bigint>();
          for (const [changelogPartition, end] of endOffsets) {
            // A store restored per partition reads only its own partitions of the changelog.
            const wanted = [...starts]
              .filter(([partition]) => spec.restore !== "partition" || partition === changelogPartition)
              .map(([, start]) => start.get(changelogPartition) ?? 0n);
            const earliest = (least: bigint | undefined, start: bigint): bigint =>
              least === undefined || start < least ? start : least;
            from.set(changelogPartition, wanted.reduce<bigint | undefined>(earliest, undefined) ?? end);
          }
          const fromText = Object.fromEntries([...from].map(([partition, offset]) => [partition, offset.toString()]));
          const begin = { processor: name, store: spec.name, changelog: changelogTopic, partitions, from: fromText };
          logger.info({ ...begin, stage: "restore-begin" }, "restoring store from its changelog");
          const records = yield* Effect.tryPromise({
            try: () =>
              client.readFrom(new Map([[changelogTopic, from]]), (message, _topic, changelogPartition) => {
                const key = message.key?.toString("utf8");
                if (key === undefined) return;
                const offset = BigInt(message.offset);
                for (const [partition, stores] of storesByPartition) {
                  if (spec.restore === "partition" && partition !== changelogPartition) continue;
                  // A store that already reflects this record (it lies before its checkpoint) skips it.
                  if (offset < (starts.get(partition)?.get(changelogPartition) ?? 0n)) continue;
                  stores.byName.get(spec.name)?.restore(key, message.value);
                }
              }),
            catch: (cause) => new KafkaIoError({ operation: `restore ${spec.name} from ${changelogTopic}`, cause }),
          });
          const held = [...storesByPartition.values()].reduce(
            (sum, stores) => sum + (stores.byName.get(spec.name)?.size ?? 0),
            0,
          );
          const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
          const restored = { processor: name, store: spec.name, records, held, seconds };
          logger.info({ ...restored, stage: "restore-end" }, "store restored");
        }
      });
      yield* fill.pipe(Effect.tapError(() => release));
      return storesByPartition;
    });

  const sourcePositions: ChangelogReader["sourcePositions"] = Effect.tryPromise({
    try: async () => ({
      ends: await client.topicEnds(sourceTopic),
      committed: await client.groupOffsets(groupId, sourceTopic),
    }),
    catch: (cause) =>
      new KafkaIoError({ operation: `read ${sourceTopic} end offsets and ${groupId} committed offsets`, cause }),
  });

  const loadLog: ChangelogReader["loadLog"] = (log, partition, logTopic) =>
    Effect.gen(function* () {
      const started = performance.now();
      const begin = { processor: name, partition, log: logTopic, stage: "log-load-begin" };
      logger.info(begin, `loading ${name} state from its contributions log`);
      let failure: unknown;
      const records = yield* Effect.tryPromise({
        try: () =>
          client.readToEnd(logTopic, async (message, _topic, from) => {
            const key = message.key?.toString("utf8");
            if (from !== partition || key === undefined || failure !== undefined) return;
            try {
              await log.load(key, message.value);
            } catch (error) {
              failure = error;
            }
          }),
        catch: (cause) => new KafkaIoError({ operation: `load ${logTopic}`, cause }),
      });
      if (failure !== undefined) return yield* Effect.fail(new ProcessorError({ processor: name, cause: failure }));
      const seconds = (performance.now() - started) / 1000;
      const recordsPerSecond = seconds > 0 ? Math.round(records / seconds) : null;
      const loaded = { processor: name, partition, records, seconds: Number(seconds.toFixed(3)), recordsPerSecond };
      const end = { ...loaded, ...log.loaded(), stage: "log-load-end" };
      logger.info(end, `${name} contributions log loaded`);
    });

  return { readChangelogs, sourcePositions, loadLog };
}
