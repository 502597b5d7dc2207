import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../../../../src/contract/facts.ts";
import { parseFactJson } from "../../../../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../../src/metrics/engine-config.ts";
import type { MetricResult } from "../../../../src/contract/result-record.ts";
import type { DecodedFact } from "../../../../src/kafka/serde/decode-fact.ts";
import type { EngineFact, ProcessResult, SinkRecord, SourceRecord, Task } from "../../../../src/stream/processor.ts";
import {
  engineProcessor,
  FLUSH_BACKLOG_THRESHOLD,
  type EnginePaging,
  type EngineStateOptions,
} from "../../../../src/stream/processors/engine.ts";
import { ingestProcessor } from "../../../../src/stream/processors/ingest.ts";
import { runMonitorProcessor } from "../../../../src/stream/processors/run-monitor.ts";
import {
  closeTaskStores,
  createTaskStores,
  settleBatch,
  storeSet,
} from "../../../../src/stream/runtime/task-writes.ts";
import { Telemetry } from "../../../../src/stream/runtime/telemetry.ts";
import { exec } from "../../tripwires/events.ts";
import { modelCall } from "../../metrics/fact-builders.ts";

const SAMPLE = fileURLToPath(new URL("../../../../samples/facts.ndjson", import.meta.url));
const parsed = readFileSync(SAMPLE, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => parseFactJson(line));
const metricFacts = parsed.flatMap((result) =>
  result.ok && !isAgentEvent(result.fact) ? [result.fact as MetricFact] : [],
);
const encode = (result: MetricResult): Buffer => Buffer.from(JSON.stringify(result));

function engineRecords(facts: readonly MetricFact[], from = 0): SourceRecord<EngineFact>[] {
  return facts.map((fact, index) => ({
    position: { topic: "engine-facts", partition: 0, offset: String(from + index) },
    value: { fact, source: { topic: "facts", partition: 0, offset: String(from + index) } },
    original: { key: null, value: null },
  }));
}

/** What a settled batch wrote under a key to the results topic. */
const onTopicOf = (
  settled: { readonly changelog: readonly { readonly key: string; readonly value: unknown }[] },
  key: string,
): unknown => settled.changelog.find((entry) => entry.key === key)?.value;

/** Going live, every page taken (as the transports take them): their outputs in order, as one result. */
const goLive = (task: Task<never>): ProcessResult => ({
  outputs: [...(task.sourceRestore?.goLive() ?? [])].flatMap((page) => page.outputs),
});

const ofTopic = <R extends SinkRecord["topic"]>(result: ProcessResult, topic: R) =>
  result.outputs.filter((output): output is Extract<SinkRecord, { topic: R }> => output.topic === topic);

/** An engine task over a published-results store holding `published` (what the results topic holds); in memory unless given local state. */
function engineTask(
  published: ReadonlyMap<string, Buffer> = new Map(),
  stateOptions?: EngineStateOptions,
  changelogEnds?: ReadonlyMap<number, bigint>,
  paging?: EnginePaging,
) {
  const processor = engineProcessor(DEFAULT_ENGINE_CONFIG, shippedCatalog(), stateOptions, paging);
  const stores = createTaskStores(processor, 0);
  const store = stores.byName.get("published-results");
  // As the runtime does: the store says where its changelog is read from (`published` is what lies there).
  if (changelogEnds !== undefined) store?.changelogStart(changelogEnds);
  for (const [key, value] of published) store?.restore(key, value);
  const task = processor.open(0, storeSet(stores), new Telemetry());
  const settle = (result: ProcessResult) => settleBatch("engine", result, stores, 0, encode);
  const close = async (): Promise<void> => {
    await task.localState?.close();
    await closeTaskStores(stores);
  };
  return { task, settle, stores, close };
}

describe("the engine processor (no broker)", () => {
  it("rebuilds silently, then goes live writing every result to an empty results topic", async () => {
    const { task, settle } = engineTask();
    task.sourceRestore?.restore(engineRecords(metricFacts));
    const live = await settle(goLive(task));
    expect(live.outputs).toEqual([]);
    expect(live.changelog.length).toBeGreaterThan(10);
    expect(live.changelog.every((entry) => entry.topic === "results" && entry.value !== null)).toBe(true);
  });

  it("goes live a page at a time: at most a page of results each, the tombstones last, written in turn as the topic needs", async () => {
    const first = engineTask();
    first.task.sourceRestore?.restore(engineRecords(metricFacts));
    const written = await first.settle(goLive(first.task));
    const results = written.changelog.length;
    expect(results).toBeGreaterThan(10);
    const onTopic = new Map(written.changelog.map((entry) => [entry.key, entry.value as Buffer] as const));
    const drifted = written.changelog[4]?.key as string;
    onTopic.set(drifted, Buffer.from('{"drifted":true}'));
    const stale = ["a key the state does not hold", "b", "c", "d"];
    for (const key of stale) onTopic.set(key, Buffer.from("{}"));

    const paged = engineTask(onTopic, undefined, undefined, { goLivePage: 3 });
    paged.task.sourceRestore?.restore(engineRecords(metricFacts));
    const pages = [...(paged.task.sourceRestore?.goLive() ?? [])];
    expect(pages).toHaveLength(Math.ceil(results / 3) + 2);
    for (const page of pages) {
      expect(page.outputs.length).toBeGreaterThan(0);
      expect(page.outputs.length).toBeLessThanOrEqual(3);
    }
    const upserts = pages.slice(0, -2).flatMap((page) => page.outputs);
    expect(upserts).toHaveLength(results);
    expect(upserts.every((output) => output.topic === "results" && output.value !== null)).toBe(true);
    expect(pages.slice(-2).flatMap((page) => page.outputs)).toEqual(
      stale.map((key) => ({ topic: "results", key, value: null })),
    );
    const changelog = [];
    for (const page of pages) changelog.push(...(await paged.settle(page)).changelog);
    // Only what the topic needs: the drifted result again, and the tombstone.
    expect(changelog.map((entry) => [entry.key, entry.value === null])).toEqual([
      [drifted, false],
      ...stale.map((key) => [key, true]),
    ]);
    expect(changelog.find((entry) => entry.key === drifted)?.value).toEqual(onTopicOf(written, drifted));
  });

  it("writes nothing on going live when the results topic already holds the rebuild (a quiet restart)", async () => {
    const first = engineTask();
    first.task.sourceRestore?.restore(engineRecords(metricFacts));
    const written = await first.settle(goLive(first.task));
    const onTopic = new Map(written.changelog.map((entry) => [entry.key, entry.value as Buffer] as const));

    const restarted = engineTask(onTopic);
    restarted.task.sourceRestore?.restore(engineRecords(metricFacts));
    const live = await restarted.settle(goLive(restarted.task));
    expect(live.changelog).toEqual([]);
  });

  it("reconciles: rewrites only a value that differs and tombstones a key no fact produces", async () => {
    const first = engineTask();
    first.task.sourceRestore?.restore(engineRecords(metricFacts));
    const written = await first.settle(goLive(first.task));
    const onTopic = new Map(written.changelog.map((entry) => [entry.key, entry.value as Buffer] as const));
    const [changedKey] = [...onTopic.keys()] as [string];
    onTopic.set(changedKey, Buffer.from("{}"));
    onTopic.set("a key no fact produces", Buffer.from("{}"));

    const restarted = engineTask(onTopic);
    restarted.task.sourceRestore?.restore(engineRecords(metricFacts));
    const live = await restarted.settle(goLive(restarted.task));
    expect(live.changelog.map((entry) => [entry.key, entry.value === null])).toEqual([
      [changedKey, false],
      ["a key no fact produces", true],
    ]);
  });

  it("with local state keeps the published results on disk, in a cache far smaller than them: a quiet restart writes nothing, a changed value and a stale key are reconciled", async () => {
    const root = mkdtempSync(join(tmpdir(), "agentops-published-"));
    // 16 KiB of engine cache: the published-results store gets 4 KiB, a few results' worth.
    const stateOptions = (name: string): EngineStateOptions => ({
      directory: (partition) => join(root, name, `engine-${String(partition)}`),
      cacheBytes: 16 * 1024,
    });
    try {
      const first = engineTask(new Map(), stateOptions("first"));
      first.task.sourceRestore?.restore(engineRecords(metricFacts));
      const written = await first.settle(goLive(first.task));
      await first.close();
      const onTopic = new Map(written.changelog.map((entry) => [entry.key, entry.value as Buffer] as const));
      const resultBytes = [...onTopic.values()].reduce((sum, value) => sum + value.length, 0);
      expect(resultBytes).toBeGreaterThan(16 * 4096);

      const quiet = engineTask(onTopic, stateOptions("quiet"));
      const store = quiet.stores.byName.get("published-results");
      expect(store?.size).toBe(onTopic.size);
      quiet.task.sourceRestore?.restore(engineRecords(metricFacts));
      expect((await quiet.settle(goLive(quiet.task))).changelog).toEqual([]);
      expect([...(store?.keys() ?? [])].sort()).toEqual([...onTopic.keys()].sort());
      await quiet.close();
      // Closed: its directory is released, and the next opening starts from what the topic holds.
      const [changedKey] = [...onTopic.keys()] as [string];
      const drifted = new Map([
        ...onTopic,
        [changedKey, Buffer.from("{}")],
        ["a key no fact produces", Buffer.from("{}")],
      ]);
      const reconciling = engineTask(drifted, stateOptions("quiet"));
      reconciling.task.sourceRestore?.restore(engineRecords(metricFacts));
      const live = await reconciling.settle(goLive(reconciling.task));
      expect(live.changelog.map((entry) => [entry.key, entry.value === null])).toEqual([
        [changedKey, false],
        ["a key no fact produces", true],
      ]);
      await reconciling.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("resumed from its checkpoint with the published results resumed from theirs, goes live comparing only the keys changed since either, and writes what a full comparison writes", async () => {
    const root = mkdtempSync(join(tmpdir(), "agentops-resumed-"));
    const stateOptions: EngineStateOptions = {
      directory: (partition) => join(root, `engine-${String(partition)}`),
      cacheBytes: 16 * 1024,
    };
    // The facts after the checkpoint: the last few (a restart after a crash replays a second or so).
    const half = metricFacts.length - 3;
    try {
      // The first process: all but the last facts, live, its writes acknowledged, checkpointed, stopped.
      const first = engineTask(new Map(), stateOptions, new Map([[0, 0n]]));
      expect(first.task.localState?.resumeFrom("0")).toBe("0");
      first.task.sourceRestore?.restore(engineRecords(metricFacts.slice(0, half)));
      const written = await first.settle(goLive(first.task));
      await first.task.localState?.committed(String(half));
      const onTopic = new Map(written.changelog.map((entry) => [entry.key, entry.value as Buffer] as const));
      await first.stores.byName.get("published-results")?.checkpoint(new Map([[0, BigInt(onTopic.size)]]));
      await first.close();

      // After its checkpoint the results topic received a stale value from a zombie writer, and the
      // last facts were processed and committed by a process that then crashed before
      // publishing it (a deferred flush).
      const [driftedKey] = [...onTopic.keys()] as [string];
      const tail = new Map([[driftedKey, Buffer.from("{}")]]);
      const topicNow = new Map([...onTopic, ...tail]);
      // Its cache is tiny, so the replay flushes as it goes (over budget): keys changed by those flushes count too.
      const second = engineTask(
        tail,
        { ...stateOptions, cacheBytes: 1024 },
        new Map([[0, BigInt(onTopic.size + tail.size)]]),
      );
      expect(second.stores.byName.get("published-results")?.size).toBe(onTopic.size);
      expect(second.task.localState?.resumeFrom(String(metricFacts.length))).toBe(String(half));
      for (const record of engineRecords(metricFacts.slice(half), half)) second.task.sourceRestore?.restore([record]);
      const goingLive = goLive(second.task);
      const live = await second.settle(goingLive);
      await second.close();

      // The reference: a full comparison of the whole result table with what the topic holds.
      const full = engineTask(topicNow);
      full.task.sourceRestore?.restore(engineRecords(metricFacts));
      const fullGoingLive = goLive(full.task);
      const expected = await full.settle(fullGoingLive);
      expect(live.changelog).toEqual(expected.changelog);
      expect(live.changelog.map((entry) => entry.key)).toContain(driftedKey);
      expect(live.changelog.length).toBeGreaterThan(1);
      const resultOutputs = (result: ProcessResult): number => ofTopic(result, "results").length;
      expect(resultOutputs(goingLive)).toBeLessThan(resultOutputs(fullGoingLive));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("after a crash, its replay writes every unit it recomputes to the contributions changelog, also one the replay leaves as its checkpointed state had it", async () => {
    const root = mkdtempSync(join(tmpdir(), "agentops-crash-changelog-"));
    const stateOptions: EngineStateOptions = {
      directory: (partition) => join(root, `engine-${String(partition)}`),
      cacheBytes: 1 << 20,
    };
    const history = metricFacts.slice(0, 30);
    const call = modelCall({ call_id: "crash-call", delivery_id: undefined, task_id: undefined });
    // Same call_id, other content: a conflict, so neither version counts (contract §1).
    const conflicting = modelCall({
      call_id: "crash-call",
      delivery_id: undefined,
      task_id: undefined,
      input_tokens: 999,
    });
    const unit = "call\u0000crash-call";
    const record = (result: ProcessResult) =>
      ofTopic(result, "engineContributions").find((output) => output.key === unit);
    try {
      // A first process builds its state and stops cleanly: checkpointed after the history.
      const first = engineTask(new Map(), stateOptions, new Map([[0, 0n]]));
      first.task.localState?.resumeFrom("0");
      first.task.sourceRestore?.restore(engineRecords(history));
      await first.settle(goLive(first.task));
      await first.task.localState?.committed(String(history.length));
      await first.close();

      // A second one resumes there, sends the call's contributions to the changelog, and crashes before any checkpoint.
      const second = engineTask(new Map(), stateOptions, new Map([[0, 0n]]));
      expect(second.task.localState?.resumeFrom(String(history.length))).toBe(String(history.length));
      goLive(second.task);
      const sent = second.task.process({ partition: 0, records: engineRecords([call], history.length), backlog: 0 });
      expect(record(sent)?.value).not.toBeNull();
      await second.close();

      // The third resumes from the same checkpoint, which knows nothing of the call, and replays it with
      // the conflicting version that came meanwhile: the call contributes nothing, as the checkpointed
      // state had it, and the changelog must hear so (a member restoring from it would count the call).
      const third = engineTask(new Map(), stateOptions, new Map([[0, 0n]]));
      expect(third.task.localState?.resumeFrom(String(history.length + 2))).toBe(String(history.length));
      third.task.sourceRestore?.restore(engineRecords([call, conflicting], history.length));
      // As the runtime goes on: live, the next batch's flush writes the changelog (its records are
      // held until the source is past its end at the assignment).
      const goingLive = goLive(third.task);
      const next = third.task.process({
        partition: 0,
        records: engineRecords(metricFacts.slice(30, 31), history.length + 2),
        backlog: 0,
      });
      expect(record(goingLive) ?? record(next)).toEqual({ topic: "engineContributions", key: unit, value: null });
      await third.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("rebuilding from offset 0 without a changelog, writes its contributions changelog as it goes; a member loading it halfway ends where the rebuild does", async () => {
    const root = mkdtempSync(join(tmpdir(), "agentops-rebuild-changelog-"));
    // A cache this small is over its budget every few facts: the rebuild flushes many times.
    const stateOptions = (name: string): EngineStateOptions => ({
      directory: (partition) => join(root, name, `engine-${String(partition)}`),
      cacheBytes: 16 * 1024,
    });
    const facts = metricFacts.slice(0, 400);
    const end = String(facts.length);
    const marker = (result: ProcessResult): bigint | undefined => {
      const found = ofTopic(result, "engineContributions").find((output) => output.key === "\u0000settled");
      return found?.value === null || found === undefined
        ? undefined
        : BigInt((JSON.parse(found.value.toString("utf8")) as { offset: string }).offset);
    };
    try {
      const rebuild = engineTask(new Map(), stateOptions("rebuild"), new Map([[0, 0n]]));
      expect(rebuild.task.localState?.resumeFrom(end)).toBe("0");
      const log: SinkRecord[] = [];
      let halfway: { readonly records: number; readonly offset: bigint } | undefined;
      for (let from = 0; from < facts.length; from += 20) {
        const restored = rebuild.task.sourceRestore?.restore(engineRecords(facts.slice(from, from + 20), from)) ?? {
          outputs: [],
        };
        log.push(...ofTopic(restored, "engineContributions"));
        const at = marker(restored);
        if (at !== undefined && halfway === undefined && at >= BigInt(facts.length / 2) && at < BigInt(facts.length))
          halfway = { records: log.length, offset: at };
      }
      // Held back until the source's end at assignment, every unit of the history was written at once.
      expect(halfway, "a changelog marker before the source's end at assignment").toBeDefined();
      const goingLive = goLive(rebuild.task);
      const rebuilt = ofTopic(goingLive, "results");
      // As the runtime goes on after going live within a batch: a batch of no records.
      const empty = rebuild.task.process({ partition: 0, records: [], backlog: 0 });
      log.push(...ofTopic(goingLive, "engineContributions"), ...ofTopic(empty, "engineContributions"));
      // Markers never go back: the last one names the source's end (it went back to 0 here before).
      const markers = log
        .filter((record) => record.key === "\u0000settled")
        .map((record) => marker({ outputs: [record] }) ?? -1n);
      expect(markers).toEqual([...markers].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(markers.at(-1)).toBe(BigInt(facts.length));
      await rebuild.close();

      // A member without local state loads the log as it stood at the halfway marker, then the facts.
      const loader = engineTask(new Map(), stateOptions("loader"), new Map([[0, 0n]]));
      expect(loader.task.localState?.resumeFrom(end)).toBe("0");
      for (const record of log.slice(0, halfway?.records))
        await loader.task.changelogLoad?.load(record.key, record.value as Buffer | null);
      expect(loader.task.changelogLoad?.loaded()["loadUntil"]).toBe(String(halfway?.offset));
      expect(loader.task.changelogLoad?.loaded()["renderFlushes"]).toBe(0);
      loader.task.sourceRestore?.restore(engineRecords(facts));
      const table = (records: readonly SinkRecord[]): string[][] =>
        records.map((record) => [record.key, JSON.stringify(record.value)]).sort();
      expect(table(ofTopic(goLive(loader.task), "results"))).toEqual(table(rebuilt));
      await loader.close();

      // The whole log loaded by a member that renders the groups it restores a few at a time (as a
      // log of tens of thousands of groups is), with no fact left to evaluate: the same table.
      const rendering = engineTask(new Map(), stateOptions("rendering"), new Map([[0, 0n]]), { loadFlushGroups: 3 });
      expect(rendering.task.localState?.resumeFrom(end)).toBe("0");
      for (const record of log) await rendering.task.changelogLoad?.load(record.key, record.value as Buffer | null);
      expect(rendering.task.changelogLoad?.loaded()["loadUntil"]).toBe(end);
      expect(Number(rendering.task.changelogLoad?.loaded()["renderFlushes"])).toBeGreaterThan(10);
      rendering.task.sourceRestore?.restore(engineRecords(facts));
      expect(table(ofTopic(goLive(rendering.task), "results"))).toEqual(table(rebuilt));
      await rendering.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("reports a conflict as a dead letter only live, naming every version's position", async () => {
    const [fact] = metricFacts as [MetricFact];
    const conflicting = { ...fact, event_time: fact.event_time + 1 } as MetricFact;
    const rebuilding = engineTask();
    rebuilding.task.sourceRestore?.restore(engineRecords([fact, conflicting]));
    const quiet = goLive(rebuilding.task);
    expect(ofTopic(quiet, "deadLetters")).toEqual([]);

    const live = engineTask();
    goLive(live.task);
    const result = live.task.process({ partition: 0, records: engineRecords([fact, conflicting]), backlog: 0 });
    const letters = ofTopic(result, "deadLetters").map((output) => output.value);
    expect(letters.length).toBeGreaterThanOrEqual(1);
    for (const letter of letters) {
      expect(letter.kind).toBe("conflict");
      if (letter.kind !== "conflict") continue;
      expect(letter.position).toEqual({ topic: "facts", partition: 0, offset: "1" });
      expect(letter.conflict.versions.map((version) => version.origin)).toEqual(
        expect.arrayContaining(["facts/0/0", "facts/0/1"]),
      );
    }
  });

  it("dead-letters an engine-facts record it cannot read, with its position and bytes, live only", () => {
    const bytes = Buffer.from([0xef, 99, 1, 2, 3]);
    const unreadable = {
      position: { topic: "engine-facts", partition: 0, offset: "7" },
      value: { unreadable: "engine-facts layout version 99; this build reads version 1" },
      original: { key: null, value: bytes },
    };
    const rebuilding = engineTask();
    rebuilding.task.sourceRestore?.restore([unreadable]);
    expect(ofTopic(goLive(rebuilding.task), "deadLetters")).toEqual([]);

    const result = rebuilding.task.process({
      partition: 0,
      records: [unreadable, ...engineRecords(metricFacts.slice(0, 1), 8)],
      backlog: 0,
    });
    const letters = ofTopic(result, "deadLetters").map((output) => output.value);
    expect(letters).toEqual([
      {
        kind: "record",
        rejection: {
          reason: "UNDECODABLE_BYTES",
          field: "",
          detail: "engine-facts record: engine-facts layout version 99; this build reads version 1",
        },
        recordRejected: true,
        position: unreadable.position,
        factId: null,
        original: { key: null, value: bytes },
      },
    ]);
    expect(ofTopic(result, "results").length).toBeGreaterThan(0);
  });

  it("defers the flush while far behind the head, and flushes at the head", () => {
    const { task } = engineTask();
    goLive(task);
    const behind = task.process({
      partition: 0,
      records: engineRecords(metricFacts.slice(0, 500)),
      backlog: FLUSH_BACKLOG_THRESHOLD + 1,
    });
    expect(ofTopic(behind, "results")).toEqual([]);
    const atHead = task.process({ partition: 0, records: engineRecords(metricFacts.slice(500, 501), 500), backlog: 0 });
    expect(ofTopic(atHead, "results").length).toBeGreaterThan(0);
  });

  it("with its state on disk, flushes a batch far behind the head once the state cache is over its budget (only a flushed state is checkpointed and evicted)", async () => {
    const root = mkdtempSync(join(tmpdir(), "agentops-engine-budget-"));
    try {
      const resultsFarBehind = async (cacheBytes: number): Promise<number> => {
        const stores = createTaskStores({ name: "engine" }, 0);
        const task = engineProcessor(DEFAULT_ENGINE_CONFIG, shippedCatalog(), {
          directory: (partition) => join(root, `${String(cacheBytes)}-${String(partition)}`),
          cacheBytes,
        }).open(0, storeSet(stores), new Telemetry());
        task.localState?.resumeFrom("0");
        goLive(task);
        const behind = task.process({
          partition: 0,
          records: engineRecords(metricFacts.slice(0, 500)),
          backlog: FLUSH_BACKLOG_THRESHOLD + 1,
        });
        await task.localState?.close();
        return ofTopic(behind, "results").length;
      };
      expect(await resultsFarBehind(64 * 1024 * 1024)).toBe(0);
      expect(await resultsFarBehind(16 * 1024)).toBeGreaterThan(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

const agentRecord = (event: ReturnType<typeof exec>, offset: number): SourceRecord<DecodedFact> => ({
  position: { topic: "agent-events", partition: 2, offset: String(offset) },
  value: { ok: true, fact: event, invalidMeasures: [], factId: event.fact_id },
  original: { key: null, value: null },
});

describe("the run-monitor processor (no broker)", () => {
  it("writes each touched run's state to the store, whose changelog goes to the source partition", async () => {
    const stores = createTaskStores(runMonitorProcessor(), 0);
    const task = runMonitorProcessor().open(2, storeSet(stores), new Telemetry());
    const result = task.process({
      partition: 2,
      records: [agentRecord(exec("run-rm", 1, "ls"), 0), agentRecord(exec("run-rm", 2, "rm -rf /"), 1)],
      backlog: 0,
    });
    expect(ofTopic(result, "alerts").length).toBeGreaterThan(0);
    expect(ofTopic(result, "runState").map((output) => output.key)).toEqual(["run-rm"]);
    const settled = await settleBatch("run-monitor", result, stores, 2, encode);
    expect(settled.changelog.map((entry) => [entry.topic, entry.key, entry.partition])).toEqual([
      ["runMonitorChangelog", "run-rm", 2],
    ]);
    expect(typeof settled.changelog[0]?.value).toBe("string");
  });

  it("restored from its changelog, recognises a re-processed batch and alerts nothing twice", async () => {
    const batch = {
      partition: 0,
      records: [agentRecord(exec("run-rm", 1, "ls"), 0), agentRecord(exec("run-rm", 2, "rm -rf /"), 1)],
      backlog: 0,
    };
    const stores = createTaskStores(runMonitorProcessor(), 0);
    const first = runMonitorProcessor().open(0, storeSet(stores), new Telemetry());
    const settled = await settleBatch("run-monitor", first.process(batch), stores, 0, encode);

    const restoredStores = createTaskStores(runMonitorProcessor(), 0);
    for (const entry of settled.changelog) restoredStores.byName.get("run-states")?.restore(entry.key, entry.value);
    const restarted = runMonitorProcessor().open(0, storeSet(restoredStores), new Telemetry());
    expect(ofTopic(restarted.process(batch), "alerts")).toEqual([]);
  });

  it("dead-letters a record that is not an agent event", () => {
    const task = runMonitorProcessor().open(0, storeSet(createTaskStores(runMonitorProcessor(), 0)), new Telemetry());
    const [fact] = metricFacts as [MetricFact];
    const result = task.process({
      partition: 0,
      records: [
        {
          position: { topic: "agent-events", partition: 0, offset: "7" },
          value: { ok: true, fact, invalidMeasures: [], factId: fact.fact_id },
          original: { key: null, value: Buffer.from("x") },
        },
      ],
      backlog: 0,
    });
    expect(ofTopic(result, "deadLetters").map((output) => output.value)).toMatchObject([
      { kind: "record", rejection: { reason: "UNKNOWN_TYPE" }, position: { offset: "7" } },
    ]);
  });
});

describe("the ingest processor (no broker)", () => {
  it("routes rejections, agent events and metric facts, each with its position", () => {
    const task = ingestProcessor.open(0, new Map(), new Telemetry());
    const records: SourceRecord<DecodedFact>[] = parsed.slice(0, 400).map((result, index) => ({
      position: { file: "facts.ndjson", line: index + 1 },
      value: { ...result, factId: result.ok ? result.fact.fact_id : null },
      original: { text: result.ok ? null : "raw" },
    }));
    const result = task.process({ partition: 0, records, backlog: 0 });
    const rejected = parsed.slice(0, 400).filter((entry) => !entry.ok).length;
    expect(
      ofTopic(result, "deadLetters").filter((output) => output.value.kind === "record" && output.value.recordRejected),
    ).toHaveLength(rejected);
    const events = ofTopic(result, "agentEvents");
    const facts = ofTopic(result, "engineFacts");
    expect(events.length + facts.length).toBe(400 - rejected);
    expect(events.every((output) => output.key === output.value.event.run_id)).toBe(true);
    expect(facts[0]?.value.source).toMatchObject({ file: "facts.ndjson" });
  });

  it("refuses, through the runtime, a write to a topic the topology does not declare", async () => {
    const stores = createTaskStores(ingestProcessor, 0);
    const [fact] = metricFacts as [MetricFact];
    const stray: ProcessResult = { outputs: [{ topic: "results", key: "k", value: null }] };
    await expect(settleBatch("ingest", stray, stores, 0, encode)).rejects.toThrow(/does not declare/);
    expect(fact).toBeDefined();
  });
});
