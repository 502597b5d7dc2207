import * as Effect from "effect/Effect";
import { KafkaIoError } from "../../../errors.ts";
import type { MemberContext } from "./member-context.ts";

/** How often a member commits the offsets whose batches' writes are acknowledged. */
export const COMMIT_INTERVAL_MS = 1_000;

/** The source offsets to commit, as the group coordinator takes them. */
export type CommitOffsets = (offsets: { topic: string; partition: number; offset: string }[]) => Promise<void>;

/**
 * Commits off the latency path: a batch whose writes are acknowledged marks its next offset, and
 * what is marked and not yet committed is committed on an interval, a rebalance and shutdown, so
 * no fetch waits on a commit round trip, and nothing is committed before its writes (at-least-once).
 */
export interface OffsetCommitter {
  /** The batch before `offset` on this source partition has its writes acknowledged. */
  readonly acknowledge: (partition: number, offset: string) => void;
  /** The coordinator holds `offset` for this source partition (kafkajs' commit event). */
  readonly committed: (partition: number, offset: string) => void;
  /** Forgets the acknowledgements of partitions no longer assigned. */
  readonly retain: (partitions: readonly number[]) => void;
  /** True when acknowledged offsets are not committed yet. */
  readonly pending: () => boolean;
  /** Commits what is acknowledged and not yet committed, one commit at a time. */
  readonly commit: (reason: string) => Effect.Effect<void, KafkaIoError>;
  /** Commits, logging a failure: the offsets stay uncommitted and the next commit retries them. */
  readonly commitQuietly: (reason: string) => Effect.Effect<void>;
}

export function offsetCommitter(member: MemberContext, commitOffsets: CommitOffsets): Effect.Effect<OffsetCommitter> {
  const { name, sourceTopic, environment } = member;
  return Effect.gen(function* () {
    const lock = yield* Effect.makeSemaphore(1);
    /** Per source partition: the next offset to read, once the writes of the batches before it are acknowledged. */
    const acknowledged = new Map<number, string>();
    /** Per source partition: the offset the group coordinator holds for this member. */
    const committed = new Map<number, string>();
    const due = (): [number, string][] =>
      [...acknowledged].filter(([partition, offset]) => committed.get(partition) !== offset);

    const commit = (reason: string): Effect.Effect<void, KafkaIoError> =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          const offsets = due().map(([partition, offset]) => ({ topic: sourceTopic, partition, offset }));
          if (offsets.length === 0) return Effect.void;
          return Effect.tryPromise({
            try: () => commitOffsets(offsets),
            catch: (cause) => new KafkaIoError({ operation: `commit ${name} offsets (${reason})`, cause }),
          });
        }),
      );
    const commitQuietly = (reason: string): Effect.Effect<void> =>
      commit(reason).pipe(
        Effect.catchAll((error) =>
          Effect.sync(() => {
            const failed = { processor: name, reason, error: error.message };
            environment.logger.warn(failed, "committing offsets failed; they stay uncommitted and are retried");
          }),
        ),
      );
    return {
      acknowledge: (partition, offset) => void acknowledged.set(partition, offset),
      committed: (partition, offset) => void committed.set(partition, offset),
      retain: (partitions) => {
        for (const partition of acknowledged.keys()) {
          if (!partitions.includes(partition)) acknowledged.delete(partition);
        }
      },
      pending: () => due().length > 0,
      commit,
      commitQuietly,
    };
  });
}
