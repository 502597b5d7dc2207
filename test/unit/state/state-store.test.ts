import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { presenceCodec, stringCodec } from "../../../src/state/codecs/values.ts";
import { engineTables, unitTables } from "../../../src/state/engine-tables.ts";
import {
  checkpointWrite,
  openLocalState,
  stateIdentity,
  StateDirectoryLockedError,
} from "../../../src/state/local-state.ts";
import { boundEngineHeapGrowth, ENGINE_HEAP_GROWING_PERCENT } from "../../../src/state/heap-growth.ts";
import { openLmdbBackend, type StateBackend } from "../../../src/state/state-backend.ts";
import { MAX_DIRTY_ENTRIES, StateStore } from "../../../src/state/state-store.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import { UnitState } from "../../../src/metrics/unit-state.ts";
import { cost, modelCall } from "../metrics/fact-builders.ts";

const root = mkdtempSync(join(tmpdir(), "agentops-state-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let directories = 0;
const fresh = (): string => join(root, `store-${String((directories += 1))}`);

describe("the LMDB backend", () => {
  it("wipes a store of more keys than one clearing transaction, and takes writes after it across a reopen", async () => {
    const directory = fresh();
    const backend = openLmdbBackend(directory);
    await backend.commit(
      Array.from({ length: 25_000 }, (_, index) => [`k${String(index)}`, Buffer.alloc(64, index % 256)] as const),
    );
    expect([...backend.scan("k")]).toHaveLength(25_000);
    backend.clear();
    expect([...backend.scan("")]).toHaveLength(0);
    await backend.commit(
      Array.from({ length: 30_000 }, (_, index) => [`n${String(index)}`, Buffer.alloc(100, 7)] as const),
    );
    await backend.close();
    const reopened = openLmdbBackend(directory);
    expect([...reopened.scan("n")]).toHaveLength(30_000);
    expect(reopened.get("k1")).toBeUndefined();
    await reopened.commit([["n1", null]]);
    expect(reopened.get("n1")).toBeUndefined();
    await reopened.close();
  });

  it("refuses use after close with an error naming the store (LMDB itself would crash the process)", async () => {
    const directory = fresh();
    const backend = openLmdbBackend(directory);
    await backend.close();
    expect(() => backend.get("k")).toThrow(/used after it was closed \(get\)/);
    await expect(backend.commit([["k", Buffer.from("v")]])).rejects.toThrow(directory);
    await backend.close();
  });
});

describe("StateStore over LMDB", () => {
  it("evicts clean entries down to its budget once a commit lands, and reads them back from disk", async () => {
    const backend = openLmdbBackend(fresh());
    const state = new StateStore(backend, 64 * 1024);
    const table = state.table("t\u0000", stringCodec);
    for (let index = 0; index < 5_000; index++)
      table.set(`key-${String(index)}`, `value-${String(index)}`.repeat(4), 40);
    expect(state.cachedBytes).toBeGreaterThan(64 * 1024);
    await state.commit();
    await state.landed();
    expect(state.cachedBytes).toBeLessThanOrEqual(64 * 1024);
    expect(state.stats().evictions).toBeGreaterThan(0);
    for (const index of [0, 1234, 4999])
      expect(table.get(`key-${String(index)}`)).toBe(`value-${String(index)}`.repeat(4));
    await backend.close();
  });

  it("commits on its own thread when asked (a restore): on disk and evicted when commit returns, nothing left pending", async () => {
    const backend = openLmdbBackend(fresh());
    const state = new StateStore(backend, 64 * 1024);
    state.commitsOnThisThread = true;
    const table = state.table("t\u0000", stringCodec);
    for (let index = 0; index < 5_000; index++)
      table.set(`key-${String(index)}`, `value-${String(index)}`.repeat(4), 40);
    table.delete("key-7");
    await state.commit();
    expect(backend.get("t\u0000key-4999")?.toString("utf8")).toBe(
      stringCodec.encode("value-4999".repeat(4)).toString("utf8"),
    );
    expect(backend.get("t\u0000key-7")).toBeUndefined();
    expect(state.cachedBytes).toBeLessThanOrEqual(64 * 1024);
    for (const index of [0, 1234, 4999])
      expect(table.get(`key-${String(index)}`)).toBe(`value-${String(index)}`.repeat(4));
    state.commitsOnThisThread = false;
    table.set("key-7", "again", 8);
    await state.commit();
    await state.landed();
    expect(table.get("key-7")).toBe("again");
    await backend.close();
  });

  it("is over its budget past MAX_DIRTY_ENTRIES dirty entries whatever their bytes, so no commit dirties more LMDB pages than that (table values and link members alike)", async () => {
    const backend = openLmdbBackend(fresh());
    const state = new StateStore(backend, 1024 * 1024 * 1024);
    const table = state.table("t\u0000", stringCodec);
    const links = state.links("l\u0000", presenceCodec);
    for (let index = 0; index < MAX_DIRTY_ENTRIES / 2; index++) table.set(`key-${String(index)}`, "v", 1);
    // Setting a key again, or a member again, is not another write.
    for (let index = 0; index < 100; index++) table.set(`key-${String(index)}`, "w", 1);
    for (let index = 0; index < MAX_DIRTY_ENTRIES / 2; index++) links.add("one-key", `member-${String(index)}`, true);
    for (let index = 0; index < 100; index++) links.add("one-key", `member-${String(index)}`, true);
    expect(state.overBudget).toBe(false);
    links.add("one-key", "one-more", true);
    expect(state.overBudget).toBe(true);
    await state.commit();
    expect(state.overBudget).toBe(false);
    await state.landed();
    expect(table.get("key-0")).toBe("w");
    await backend.close();
  });

  it("keeps dirty entries until their commit, and a delete hides the value on disk", async () => {
    const backend = openLmdbBackend(fresh());
    const state = new StateStore(backend, 0);
    const table = state.table("t\u0000", stringCodec);
    table.set("a", "1");
    table.set("b", "2");
    await state.commit();
    await state.landed();
    table.delete("a");
    table.set("c", "3");
    expect(table.get("a")).toBeUndefined();
    expect([...table.scan()].sort()).toEqual([
      ["b", "2"],
      ["c", "3"],
    ]);
    await state.commit();
    await state.landed();
    expect(backend.get("t\u0000a")).toBeUndefined();
    expect(backend.get("t\u0000c")?.length).toBeGreaterThan(0);
    await backend.close();
  });

  it("counts cached link keys near their measured heap size, so the budget bounds the heap (empty keys were counted at a quarter of it)", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const heapUsed = (): number => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const keys = 50_000;
    // Keys shaped as the engine's (a run, a task, an hour); most keys an ingest looks up have no members.
    for (const members of [0, 1]) {
      const state = new StateStore(openLmdbBackend(fresh()), Number.POSITIVE_INFINITY);
      const links = state.links("x\u0000", presenceCodec);
      const before = heapUsed();
      for (let index = 0; index < keys; index += 1) {
        const key = `run-${index.toString(36).padStart(8, "0")}|task-${String(index)}|2026-11-30T10`;
        if (members === 0) links.members(key);
        else links.add(key, `member-${String(index)}`, true);
      }
      const measured = heapUsed() - before;
      expect(state.cachedBytes, `${String(members)} member(s) per key`).toBeGreaterThan(measured * 0.8);
      expect(state.cachedBytes, `${String(members)} member(s) per key`).toBeLessThan(measured * 2);
    }
  });

  it("link tables: members of keys that are prefixes of each other, or contain NUL, never mix", async () => {
    const backend = openLmdbBackend(fresh());
    const state = new StateStore(backend, 0);
    const links = state.links("l\u0000", stringCodec);
    links.add("a", "m1", "x");
    links.add("a\u0000b", "m2", "y");
    links.add("a\u0000", "m3", "z");
    await state.commit();
    await state.landed();
    expect([...links.members("a").keys()]).toEqual(["m1"]);
    expect([...links.members("a\u0000b").keys()]).toEqual(["m2"]);
    expect([...links.members("a\u0000").keys()]).toEqual(["m3"]);
    expect([...links.members("nothing").keys()]).toEqual([]);
    const scanned = new Map([...links.scan()].map(([key, members]) => [key, [...members.keys()]]));
    expect(scanned).toEqual(
      new Map([
        ["a", ["m1"]],
        ["a\u0000b", ["m2"]],
        ["a\u0000", ["m3"]],
      ]),
    );
    // The last member gone, the key's header goes too: nothing of it stays on disk.
    links.delete("a", "m1");
    await state.commit();
    await state.landed();
    expect([...backend.scan(`l\u00001\u0000a\u0000`)]).toEqual([]);
    await backend.close();
  });
});

/** The backend, with every key its commits write or delete appended to `written`, in order. */
function recordingWrites(backend: StateBackend, written: string[]): StateBackend {
  return {
    ...backend,
    commit: async (writes) => {
      const list = [...writes];
      written.push(...list.map(([key]) => key));
      await backend.commit(list);
    },
  };
}

describe("the engine's changed units on disk", () => {
  const CHANGED_UNITS = "cu\u0000";
  const facts = Array.from({ length: 20 }, (_, index) => [
    modelCall({ fact_id: `call-fact-${String(index)}`, call_id: `call-${String(index)}` }),
    cost({ fact_id: `cost-fact-${String(index)}`, cost_id: `cost-${String(index)}`, call_id: `call-${String(index)}` }),
  ]).flat();

  it("are never written when the changelog took them before the commit (live), and survive a restart when it had not (replaying old input)", async () => {
    const directory = fresh();
    const written: string[] = [];
    const open = (): { engine: MetricEngine; state: StateStore; backend: ReturnType<typeof openLmdbBackend> } => {
      const backend = openLmdbBackend(directory);
      const state = new StateStore(recordingWrites(backend, written), 1 << 20);
      return { engine: new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(state)), state, backend };
    };
    const live = open();
    for (const fact of facts.slice(0, 20)) live.engine.ingest(fact);
    live.engine.flush();
    const taken = live.engine.unitChanges();
    expect(taken.length).toBeGreaterThan(0);
    await live.state.commit();
    await live.state.landed();
    // Not even a delete: the commit wrote state, and no changed-unit key.
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((key) => key.startsWith(CHANGED_UNITS))).toEqual([]);

    // Replaying: flushed and committed with no changelog records taken, then the process stops.
    for (const fact of facts.slice(20)) live.engine.ingest(fact);
    live.engine.flush();
    await live.state.commit();
    await live.state.landed();
    const spilled = [...live.backend.scan(CHANGED_UNITS)].map(([key]) => key.slice(CHANGED_UNITS.length));
    expect(spilled.length).toBeGreaterThan(0);
    await live.backend.close();

    const restarted = open();
    const pending = restarted.engine.unitChanges();
    expect(pending.map(([unit]) => unit)).toEqual([...spilled].sort());
    expect(pending.every(([, contributions]) => contributions.length > 0)).toBe(true);
    // Taken once: the next commit deletes them, and nothing is left to take.
    await restarted.state.commit();
    await restarted.state.landed();
    expect([...restarted.backend.scan(CHANGED_UNITS)]).toEqual([]);
    expect(restarted.engine.unitChanges()).toEqual([]);
    await restarted.backend.close();
  });

  it("are not kept at all by a unit state without a changelog (a partitioned stage's)", async () => {
    const backend = openLmdbBackend(fresh());
    const written: string[] = [];
    const state = new StateStore(recordingWrites(backend, written), 1 << 20);
    const units = new UnitState(DEFAULT_ENGINE_CONFIG, unitTables(state, { changelog: false }));
    for (const fact of facts) units.admit(fact);
    units.recomputeUnits();
    expect(units.takeDirtyGroups().length).toBeGreaterThan(0);
    await state.commit();
    await state.landed();
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((key) => key.startsWith(CHANGED_UNITS))).toEqual([]);
    expect(units.unitChanges()).toEqual([]);
    await backend.close();
  });
});

describe("result keys in stored unit contributions", () => {
  const facts = Array.from({ length: 12 }, (_, index) => [
    modelCall({
      fact_id: `call-fact-${String(index)}`,
      call_id: `call-${String(index)}`,
      delivery_id: `delivery-${String(index % 3)}`,
    }),
    cost({ fact_id: `cost-fact-${String(index)}`, cost_id: `cost-${String(index)}`, call_id: `call-${String(index)}` }),
  ]).flat();

  it("are stored as ids (not the canonical JSON), read back across a restart with nothing cached, and new keys after it get new ids", async () => {
    const directory = fresh();
    const memory = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of facts) memory.ingest(fact);

    const first = openLmdbBackend(directory);
    const firstState = new StateStore(first, 0);
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(firstState));
    for (const fact of facts.slice(0, 12)) engine.ingest(fact);
    engine.flush();
    await firstState.commit();
    await firstState.landed();
    // The call and Delivery documents hold their units' contributions (src/metrics/entity-docs.ts).
    const stored = [...first.scan("ec\u0000"), ...first.scan("ed\u0000")];
    expect(stored.length).toBeGreaterThan(0);
    // A result key is canonical JSON naming its metric: no stored contribution carries one.
    expect(stored.filter(([, bytes]) => bytes.includes("metric_id"))).toEqual([]);
    const idsBefore = new Set([...first.scan("gn\u0000")].map(([, bytes]) => bytes.readUInt32BE(0)));
    expect(idsBefore.size).toBeGreaterThan(0);
    await first.close();

    const second = openLmdbBackend(directory);
    const secondState = new StateStore(second, 0);
    const restarted = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(secondState));
    // The rest changes the units already stored (their contributions are read back and retracted)
    // and reaches groups the first process never stored.
    for (const fact of facts.slice(12)) restarted.ingest(fact);
    restarted.flush();
    await secondState.commit();
    await secondState.landed();
    expect(restarted.results().map((row) => row.json)).toEqual(memory.results().map((row) => row.json));
    const idsAfter = [...second.scan("gn\u0000")].map(([key, bytes]) => [key, bytes.readUInt32BE(0)] as const);
    // One id per key, never reused.
    expect(new Set(idsAfter.map(([, id]) => id)).size).toBe(idsAfter.length);
    expect(idsAfter.length).toBeGreaterThanOrEqual(idsBefore.size);
    await second.close();
  });
});

describe("local state directories", () => {
  const identity = stateIdentity(DEFAULT_ENGINE_CONFIG, shippedCatalog());
  const options = (directory: string) => ({ directory: () => directory, cacheBytes: 1 << 20 });

  it("a checkpoint of another identity (layout, configuration, catalog) is not resumed: the store is wiped", async () => {
    const directory = fresh();
    const first = openLocalState(options(directory), 0, identity);
    first.state.table("t\u0000", stringCodec).set("k", "v");
    await first.state.commit([checkpointWrite({ offset: "42", identity })]);
    await first.state.landed();
    await first.state.backend?.close();
    first.release();

    const same = openLocalState(options(directory), 0, identity);
    expect(same.checkpoint?.offset).toBe("42");
    await same.state.backend?.close();
    same.release();

    const other = openLocalState(
      options(directory),
      0,
      stateIdentity({ ...DEFAULT_ENGINE_CONFIG, windowMillis: 3_600_000 }, shippedCatalog()),
    );
    expect(other.checkpoint).toBeUndefined();
    expect(other.state.table("t\u0000", stringCodec).get("k")).toBeUndefined();
    await other.state.backend?.close();
    other.release();
  });

  it("a directory held by a live process is refused naming the fix; a dead holder's lock is taken over", async () => {
    const directory = fresh();
    const held = openLocalState(options(directory), 0, identity);
    await held.state.backend?.close();
    held.release();
    // A live process (not this one) holding the lock.
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(directory, "LOCK.pid"), String(sleeper.pid));
      expect(() => openLocalState(options(directory), 0, identity)).toThrow(StateDirectoryLockedError);
      expect(() => openLocalState(options(directory), 0, identity)).toThrow(
        /give each instance on one machine its own --state-dir/,
      );
    } finally {
      sleeper.kill("SIGKILL");
      await new Promise((resolve) => sleeper.once("exit", resolve));
    }
    // Its holder gone (a killed process), the lock is taken over.
    const taken = openLocalState(options(directory), 0, identity);
    expect(readFileSync(join(directory, "LOCK.pid"), "utf8")).toBe(String(process.pid));
    await taken.state.backend?.close();
    taken.release();
  });
});

describe("the engine's heap growth", () => {
  it("is bounded to a factor of 2 unless the operator chose one on the command line or in NODE_OPTIONS", () => {
    expect(boundEngineHeapGrowth(["--heap-growing-percent=30"], "")).toBeUndefined();
    expect(boundEngineHeapGrowth([], "--max-old-space-size=512 --heap_growing_percent=10")).toBeUndefined();
    expect(boundEngineHeapGrowth(["--max-old-space-size=512"], "--enable-source-maps")).toBe(
      ENGINE_HEAP_GROWING_PERCENT,
    );
  });
});
