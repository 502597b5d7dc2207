import { Effect, Exit } from "effect";
import { describe, expect, it } from "vitest";
import { KafkaIoError } from "../../../../src/errors.ts";
import type { ChangelogLoad, Processor, SinkRecord, StoreSet, Task } from "../../../../src/stream/processor.ts";
import { createTaskStores } from "../../../../src/stream/runtime/task-writes.ts";
import { changelogReader } from "../../../../src/stream/transports/kafka/changelog-reader.ts";
import { checkpointer } from "../../../../src/stream/transports/kafka/checkpointer.ts";
import type { PartitionTask } from "../../../../src/stream/transports/kafka/member-context.ts";
import { offsetCommitter } from "../../../../src/stream/transports/kafka/offset-committer.ts";
import { reconciler } from "../../../../src/stream/transports/kafka/reconciler.ts";
import { recordCollector } from "../../../../src/stream/transports/kafka/record-collector.ts";
import { WRITER_HEADER } from "../../../../src/stream/transports/kafka/sink-encoding.ts";
import { InMemoryKeyValueStore } from "../../../../src/stream/stores/key-value-store.ts";
import { fakeMember, FakeMemberClient, TOPICS } from "./fake-member-client.ts";

/** An in-memory store that checkpoints: what a store on disk says to its member. */
class CheckpointingStore extends InMemoryKeyValueStore<unknown> {
  readonly checkpoints: string[] = [];
  private readonly startAt: ReadonlyMap<number, bigint> | undefined;
  constructor(startAt: ReadonlyMap<number, bigint> | undefined) {
    super("run-states");
    this.startAt = startAt;
  }
  restoreStart(ends: ReadonlyMap<number, bigint>): { from: ReadonlyMap<number, bigint>; resumed: boolean } {
    const fromStart = new Map([...ends.keys()].map((partition) => [partition, 0n]));
    return { from: this.startAt ?? fromStart, resumed: this.startAt !== undefined };
  }
  checkpoint(ends: ReadonlyMap<number, bigint>, format?: string): Promise<void> {
    this.checkpoints.push(`${[...ends].map(([partition, end]) => `${partition}:${end}`).join(",")} ${format ?? "-"}`);
    return Promise.resolve();
  }
}

function processor(
  name: Processor<never>["name"],
  task: Partial<Task<unknown>> = {},
  store?: (partition: number) => CheckpointingStore,
): Processor<never> {
  return {
    name,
    ...(store === undefined ? {} : { openStore: (_name: string, partition: number) => store(partition) }),
    open: () => ({ process: () => ({ outputs: [] }), ...task }) as Task<never>,
  };
}

function partitionTask(of: Processor<never>, partition: number, task: Partial<Task<unknown>> = {}): PartitionTask {
  const stores = createTaskStores(of, partition);
  return {
    task: { process: () => ({ outputs: [] }), ...task },
    stores,
    restoreEnd: undefined,
    restoreStarted: undefined,
    unsent: undefined,
    storesAhead: false,
    storesCheckpointedAt: 0,
  };
}

const storeOf = (entry: PartitionTask): StoreSet => entry.stores.byName;

describe("record collector", () => {
  it("sends the first sinks in a request of their own, then the rest with the store's changelog", async () => {
    const client = new FakeMemberClient();
    const monitor = processor("run-monitor");
    const entry = partitionTask(monitor, 2);
    storeOf(entry).get("run-states")?.put("run-1", Buffer.from("state"));
    const outputs: SinkRecord[] = [
      { topic: "runState", key: "run-1", value: { run: "run-1" } as never },
      { topic: "alerts", key: "run-1", value: { rule: "loop" } as never },
    ];
    const collector = recordCollector(fakeMember(monitor, client));
    const changelog = await Effect.runPromise(collector.settleAndWrite(entry, 2, { outputs }));
    const change = { topic: "runMonitorChangelog", key: "run-1", value: Buffer.from("state"), partition: 2 };
    expect(changelog).toEqual([change]);
    expect(client.requests).toEqual([[TOPICS.alerts], [TOPICS.runState, TOPICS.runMonitorChangelog]]);
    expect(client.records(TOPICS.runMonitorChangelog, 2).map((record) => record.key)).toEqual(["run-1"]);
    expect(client.records(TOPICS.alerts)[0]?.value?.toString()).toBe(JSON.stringify({ rule: "loop" }));
  });

  it("keeps a failed send's writes and sends them ahead of the next batch's", async () => {
    const client = new FakeMemberClient();
    const monitor = processor("run-monitor");
    const entry = partitionTask(monitor, 0);
    const collector = recordCollector(fakeMember(monitor, client));
    const alert = (key: string): SinkRecord => ({ topic: "alerts", key, value: { rule: key } as never });
    client.failSends = 1;
    const failed = await Effect.runPromiseExit(collector.settleAndWrite(entry, 0, { outputs: [alert("first")] }));
    const error = Exit.isFailure(failed) && failed.cause._tag === "Fail" ? failed.cause.error : undefined;
    expect(error).toBeInstanceOf(KafkaIoError);
    expect(entry.storesAhead).toBe(true);
    await Effect.runPromise(collector.settleAndWrite(entry, 0, { outputs: [alert("second")] }));
    expect(client.records(TOPICS.alerts).map((record) => record.key)).toEqual(["first", "second"]);
    expect(entry.unsent).toBeUndefined();
    expect(entry.storesAhead).toBe(false);
  });
});

describe("offset committer", () => {
  it("commits only acknowledged offsets the coordinator lacks, and keeps them after a failed commit", async () => {
    const commits: string[][] = [];
    let refuse = false;
    const committer = await Effect.runPromise(
      offsetCommitter(fakeMember(processor("run-monitor"), new FakeMemberClient()), (offsets) => {
        if (refuse) return Promise.reject(new Error("coordinator moved"));
        commits.push(offsets.map((entry) => `${entry.topic}/${entry.partition}@${entry.offset}`));
        return Promise.resolve();
      }),
    );
    expect(committer.pending()).toBe(false);
    committer.acknowledge(0, "5");
    committer.acknowledge(1, "3");
    committer.committed(1, "3");
    refuse = true;
    await Effect.runPromise(committer.commitQuietly("interval"));
    expect(committer.pending()).toBe(true);
    refuse = false;
    await Effect.runPromise(committer.commit("interval"));
    expect(commits).toEqual([[`${TOPICS.agentEvents}/0@5`]]);
    committer.committed(0, "5");
    expect(committer.pending()).toBe(false);
    committer.acknowledge(2, "9");
    committer.retain([0, 1]);
    expect(committer.pending()).toBe(false);
  });
});

describe("checkpointer", () => {
  it("checkpoints a store kept on disk at its changelog's end, never with unacknowledged writes", async () => {
    const client = new FakeMemberClient();
    client.append(TOPICS.runMonitorChangelog, 0, { key: "a", value: Buffer.from("1"), headers: {} });
    client.append(TOPICS.runMonitorChangelog, 1, { key: "b", value: Buffer.from("2"), headers: {} });
    const store = new CheckpointingStore(undefined);
    const monitor = processor("run-monitor", {}, () => store);
    const entry = partitionTask(monitor, 0);
    const checkpoints = checkpointer(fakeMember(monitor, client));
    entry.storesAhead = true;
    await Effect.runPromise(checkpoints.checkpointStores(entry));
    expect(store.checkpoints).toEqual([]);
    entry.storesAhead = false;
    await Effect.runPromise(checkpoints.checkpointStores(entry));
    expect(store.checkpoints).toEqual(["0:1,1:1 -"]);
    expect(entry.storesCheckpointedAt).toBeGreaterThan(0);
  });
});

describe("changelog reader", () => {
  it("restores a partition's store from its own changelog partition, from the store's checkpoint", async () => {
    const client = new FakeMemberClient();
    for (const [partition, key] of [
      [0, "other"],
      [1, "old"],
      [1, "run-1"],
      [1, "run-2"],
    ] as const) {
      client.append(TOPICS.runMonitorChangelog, partition, { key, value: Buffer.from(key), headers: {} });
    }
    client.append(TOPICS.runMonitorChangelog, 1, { key: "run-2", value: null, headers: {} });
    const checkpoint = (partition: number): CheckpointingStore =>
      new CheckpointingStore(partition === 1 ? new Map([[1, 1n]]) : undefined);
    const member = fakeMember(processor("run-monitor", {}, checkpoint), client);
    const stores = await Effect.runPromise(changelogReader(member, checkpointer(member)).readChangelogs([0, 1]));
    const keys = (partition: number): string[] => [...(stores.get(partition)?.byName.get("run-states")?.keys() ?? [])];
    expect(keys(0)).toEqual(["other"]);
    expect(keys(1)).toEqual(["run-1"]);
  });

  it("reads the source's ends and the group's committed offsets, and loads a task's partition of its log", async () => {
    const client = new FakeMemberClient();
    for (let offset = 0; offset < 3; offset += 1) {
      client.append(TOPICS.engineFacts, 0, { key: `f${offset}`, value: null, headers: {} });
    }
    client.groups.set("unit.engine", new Map([[0, 2n]]));
    client.append(TOPICS.engineContributions, 0, { key: "unit-a", value: Buffer.from("a"), headers: {} });
    client.append(TOPICS.engineContributions, 1, { key: "unit-b", value: Buffer.from("b"), headers: {} });
    const engine = processor("engine");
    const member = fakeMember(engine, client);
    const reader = changelogReader(member, checkpointer(member));
    const positions = await Effect.runPromise(reader.sourcePositions);
    expect(positions).toEqual({ ends: new Map([[0, 3n]]), committed: new Map([[0, 2n]]) });
    const loaded: string[] = [];
    const log: ChangelogLoad = { load: (key) => Promise.resolve(void loaded.push(key)), loaded: () => ({}) };
    await Effect.runPromise(reader.loadLog(log, 0, TOPICS.engineContributions));
    expect(loaded).toEqual(["unit-a"]);
  });
});

describe("reconciler", () => {
  it("reads back only what this writer wrote since its checkpoint and writes the task's corrections", async () => {
    const client = new FakeMemberClient();
    const written = ["aggregation-0", "aggregation-0", "aggregation-1", "aggregation-0"];
    for (const [at, writer] of written.entries()) {
      const key = "abcd"[at] ?? "";
      client.append(TOPICS.results, 0, { key, value: Buffer.from(key), headers: { [WRITER_HEADER]: writer } });
    }
    const aggregation = processor("aggregation");
    const asked: string[] = [];
    const entry = partitionTask(aggregation, 0, {
      reconciliation: {
        writtenSince: () => ({ writer: "aggregation-0", from: new Map([["results", new Map([[0, "1"]])]]) }),
        reconcile: (_role, key) => {
          asked.push(key);
          return key === "d" ? { topic: "results", key, value: null, writer: "aggregation-0" } : undefined;
        },
      },
    });
    const member = fakeMember(aggregation, client);
    await Effect.runPromise(reconciler(member, recordCollector(member))(entry, 0));
    expect(asked).toEqual(["b", "d"]);
    const tombstone = { key: "d", value: null, headers: { [WRITER_HEADER]: "aggregation-0" } };
    expect(client.records(TOPICS.results).slice(4)).toEqual([tombstone]);
  });
});
