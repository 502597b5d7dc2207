import { Effect } from "effect";
import type { KafkaMessage } from "kafkajs";
import { describe, expect, it } from "vitest";
import { NOTHING, type Processor, type SourceRecord, type Task } from "../../../../src/stream/processor.ts";
import { batchHandler, type BatchPayload } from "../../../../src/stream/transports/kafka/batch-handler.ts";
import { changelogReader } from "../../../../src/stream/transports/kafka/changelog-reader.ts";
import { checkpointer } from "../../../../src/stream/transports/kafka/checkpointer.ts";
import { offsetCommitter } from "../../../../src/stream/transports/kafka/offset-committer.ts";
import { reconciler } from "../../../../src/stream/transports/kafka/reconciler.ts";
import { recordCollector } from "../../../../src/stream/transports/kafka/record-collector.ts";
import { taskManager } from "../../../../src/stream/transports/kafka/task-manager.ts";
import { fakeMember, FakeMemberClient, TOPICS } from "./fake-member-client.ts";

interface Seen {
  restored: string[];
  live: number;
  processed: string[];
  committed: string[];
  /** Runs while the task processes a batch. */
  during?: () => void;
}

/**
 * A fact-ledger stage (its source is its changelog): its task resumes from `resumeAt` and records what it
 * is given.
 */
function ledger(resumeAt: string, seen: Seen): Processor<never> {
  const offsets = (records: readonly SourceRecord<unknown>[]): string[] =>
    records.map((record) => (record.position as { offset: string }).offset);
  const task: Task<unknown> = {
    localState: {
      resumeFrom: () => resumeAt,
      committed: (next) => Promise.resolve(void seen.committed.push(next)),
      close: () => Promise.resolve(),
    },
    sourceRestore: {
      restore: (records) => {
        seen.restored.push(...offsets(records));
        return NOTHING;
      },
      goLive: () => {
        seen.live += 1;
        return [];
      },
    },
    process: (batch) => {
      seen.processed.push(...offsets(batch.records));
      seen.during?.();
      return { outputs: [] };
    },
  };
  return { name: "fact-ledger", open: () => task as Task<never> };
}

/** The ledger's member on a fake client: source partition 0 holds `records`; the group committed `committed`. */
async function ledgerMember(resumeAt: string, records: number, committed: bigint | undefined) {
  const client = new FakeMemberClient();
  for (let offset = 0; offset < records; offset += 1) {
    client.append(TOPICS.stageFacts, 0, { key: null, value: null, headers: {} });
  }
  if (committed !== undefined) client.groups.set("unit.fact-ledger", new Map([[0, committed]]));
  const seen: Seen = { restored: [], live: 0, processed: [], committed: [] };
  const member = fakeMember(ledger(resumeAt, seen), client);
  const acknowledged: string[] = [];
  const offsets = await Effect.runPromise(offsetCommitter(member, () => Promise.resolve()));
  const acknowledge = (partition: number, offset: string): void => void acknowledged.push(`${partition}@${offset}`);
  const acknowledging = { ...offsets, acknowledge };
  const collector = recordCollector(member);
  const checkpoints = checkpointer(member);
  const reader = changelogReader(member, checkpoints);
  const reconcile = reconciler(member, collector);
  const tasks = taskManager(member, { collector, checkpoints, reader, reconcile, offsets });
  const handle = batchHandler(member, { tasks, collector, checkpoints, offsets: acknowledging }, 1_000);
  return { tasks, handle, seen, acknowledged };
}

/** A fetched batch of source partition 0 holding offsets [from, to). */
function batchOf(from: number, to: number, highWatermark: number, resolved: string[]): BatchPayload {
  const messages = Array.from({ length: to - from }, (_, at) => ({
    key: null,
    value: null,
    offset: String(from + at),
  }));
  const batch = {
    topic: TOPICS.stageFacts,
    partition: 0,
    highWatermark: String(highWatermark),
    messages: messages as unknown as KafkaMessage[],
    lastOffset: () => String(to - 1),
  };
  return {
    batch: batch as unknown as BatchPayload["batch"],
    heartbeat: () => Promise.resolve(),
    isRunning: () => true,
    isStale: () => false,
    resolveOffset: (offset) => void resolved.push(offset),
  };
}

describe("task manager and batch handler", () => {
  it("replays the source silently up to the group's committed offset, then goes live and processes on", async () => {
    const { tasks, handle, seen, acknowledged } = await ledgerMember("0", 5, 3n);
    const seeks: string[] = [];
    await Effect.runPromise(tasks.assign([0], (partition, offset) => void seeks.push(`${partition}@${offset}`)));
    expect(seeks).toEqual(["0@0"]);
    expect(tasks.task(0)?.restoreEnd).toBe(3n);
    expect(seen.live).toBe(0);
    const resolved: string[] = [];
    await Effect.runPromise(handle(batchOf(0, 5, 5, resolved), Effect.void));
    expect(seen).toEqual({ restored: ["0", "1", "2"], live: 1, processed: ["3", "4"], committed: ["5"] });
    expect(resolved).toEqual(["4"]);
    expect(acknowledged).toEqual(["0@5"]);
  });

  it("goes live at once when the task's checkpoint is at or past what the group committed", async () => {
    const { tasks, seen } = await ledgerMember("4", 5, 2n);
    const seeks: string[] = [];
    await Effect.runPromise(tasks.assign([0], (partition, offset) => void seeks.push(`${partition}@${offset}`)));
    expect(seeks).toEqual(["0@4"]);
    expect(seen.live).toBe(1);
    expect(tasks.task(0)?.restoreEnd).toBeUndefined();
  });

  it("leaves the offsets of a batch whose assignment moved while it was in flight to the new task", async () => {
    const { tasks, handle, seen, acknowledged } = await ledgerMember("0", 3, 2n);
    await Effect.runPromise(tasks.assign([0], () => undefined));
    const resolved: string[] = [];
    // The rebalance takes partition 0 away while its batch is being processed.
    let revoked: Promise<void> | undefined;
    seen.during = () => {
      revoked = Effect.runPromise(tasks.assign([1], () => undefined));
    };
    await Effect.runPromise(handle(batchOf(0, 3, 3, resolved), Effect.void));
    await revoked;
    expect(seen.processed).toEqual(["2"]);
    expect(tasks.task(0)).toBeUndefined();
    expect(resolved).toEqual([]);
    expect(acknowledged).toEqual([]);
  });
});
