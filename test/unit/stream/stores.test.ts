import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openScratchState, StateDirectoryLockedError } from "../../../src/metrics/state/local-state.ts";
import { BYTES_CODEC, ChangeLoggingKeyValueStore, writeChanged } from "../../../src/stream/stores/changelogging-store.ts";
import { InMemoryKeyValueStore } from "../../../src/stream/stores/key-value-store.ts";
import { OnDiskKeyValueStore } from "../../../src/stream/stores/on-disk-key-value-store.ts";

describe("the changelogging store", () => {
  it("logs every key put or deleted with its value at drain time, and restores without logging", () => {
    const store = new ChangeLoggingKeyValueStore(new InMemoryKeyValueStore<string>("s"), { encode: (value: string) => value, decode: (bytes) => bytes.toString() });
    store.restore("kept", "v0");
    expect(store.drain()).toEqual([]);
    store.put("a", "1");
    store.put("a", "2");
    store.delete("kept");
    store.put("b", "3");
    expect(store.drain()).toEqual([
      ["a", "2"],
      ["kept", null],
      ["b", "3"],
    ]);
    expect(store.drain()).toEqual([]);
    expect([...store.entries()]).toEqual([
      ["a", "2"],
      ["b", "3"],
    ]);
  });

  it("keeps restored encoded values as copies, not as slices pinning the fetch response they came in", () => {
    const response = Buffer.alloc(1 << 20, 7);
    const store = new ChangeLoggingKeyValueStore(new InMemoryKeyValueStore<Buffer>("t"), BYTES_CODEC);
    store.restore("k", response.subarray(100, 140));
    const held = store.get("k");
    expect(held).toEqual(Buffer.alloc(40, 7));
    expect(held?.buffer.byteLength).toBe(40);
  });

  it("writes a table through it, logging only what changes what it holds", async () => {
    const store = new ChangeLoggingKeyValueStore(new InMemoryKeyValueStore<Buffer>("t"), BYTES_CODEC);
    store.restore("same", Buffer.from("1"));
    store.restore("changed", Buffer.from("1"));
    store.restore("gone", Buffer.from("1"));
    await writeChanged(
      store,
      [
        ["same", "1"],
        ["changed", "2"],
        ["gone", null],
        ["never-held", null],
        ["new", "3"],
      ],
      (value: string) => Buffer.from(value),
    );
    expect(store.drain().map(([key, value]) => [key, value?.toString() ?? null])).toEqual([
      ["changed", "2"],
      ["gone", null],
      ["new", "3"],
    ]);
  });
});

describe("the store on disk (published results with local state)", () => {
  const root = mkdtempSync(join(tmpdir(), "agentops-on-disk-store-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const BUDGET = 16 * 1024;
  const value = (index: number): Buffer => Buffer.from(`{"result":${String(index)},"padding":"${"x".repeat(180)}"}`);

  it("holds far more than its cache budget, reads every value back, and counts its keys", async () => {
    const scratch = openScratchState(join(root, "bounded"), BUDGET);
    const store = new OnDiskKeyValueStore("published-results", scratch);
    for (let index = 0; index < 5_000; index++) {
      store.put(`key-${String(index)}`, value(index));
      // Between fetched batches the runtime yields: commits land and the cache evicts.
      if (index % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    store.put("key-7", value(70_000));
    store.delete("key-8");
    store.delete("never written");
    await store.settled();
    expect(scratch.state.stats().evictions).toBeGreaterThan(0);
    expect(scratch.state.stats().cachedBytes).toBeLessThanOrEqual(BUDGET);
    expect(store.size).toBe(4_999);
    expect(store.get("key-7")?.equals(value(70_000))).toBe(true);
    expect(store.get("key-8")).toBeUndefined();
    expect(store.get("key-4321")?.equals(value(4321))).toBe(true);
    expect(new Set(store.keys()).size).toBe(4_999);
    await store.close();
  });

  it("starts empty at every opening (it is restored from its topic), and refuses a directory another live process holds", async () => {
    const directory = join(root, "scratch");
    const first = new OnDiskKeyValueStore("published-results", openScratchState(directory, BUDGET));
    first.put("k", value(1));
    await first.close();
    const second = new OnDiskKeyValueStore("published-results", openScratchState(directory, BUDGET));
    expect(second.size).toBe(0);
    expect(second.get("k")).toBeUndefined();
    await second.close();
    // Released on close; a lock naming another live process (the parent here) is refused.
    expect(existsSync(join(directory, "LOCK.pid"))).toBe(false);
    writeFileSync(join(directory, "LOCK.pid"), String(process.ppid));
    expect(() => openScratchState(directory, BUDGET)).toThrow(StateDirectoryLockedError);
  });
});
