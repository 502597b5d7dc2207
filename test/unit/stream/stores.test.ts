import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStoreDirectory, StateDirectoryLockedError } from "../../../src/state/local-state.ts";
import {
  BYTES_CODEC,
  ChangeLoggingKeyValueStore,
  writeChanged,
} from "../../../src/stream/stores/changelogging-store.ts";
import { InMemoryKeyValueStore } from "../../../src/stream/stores/key-value-store.ts";
import { OnDiskKeyValueStore } from "../../../src/stream/stores/on-disk-key-value-store.ts";

describe("the changelogging store", () => {
  it("logs every key put or deleted with its value at drain time, and restores without logging", () => {
    const store = new ChangeLoggingKeyValueStore(new InMemoryKeyValueStore<string>("s"), {
      encode: (value: string) => value,
      decode: (bytes) => bytes.toString(),
    });
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
    const scratch = openStoreDirectory(join(root, "bounded"), BUDGET);
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

  it("keeps its contents across openings with a checkpoint, and says to read its changelog from the checkpoint's offsets", async () => {
    const directory = join(root, "checkpointed");
    const first = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    expect(first.restoreStart(new Map([[0, 0n]]))).toEqual({ from: new Map([[0, 0n]]), resumed: false });
    first.put("k", value(1));
    first.put("gone", value(2));
    first.delete("gone");
    await first.checkpoint(new Map([[0, 12n]]));
    // A write after the checkpoint that no commit took is dropped with the process.
    first.put("later", value(3));
    await first.close();

    const second = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    expect(second.size).toBe(1);
    expect(second.get("k")?.equals(value(1))).toBe(true);
    expect(second.get("later")).toBeUndefined();
    // The topic grew and gained a partition: read from the checkpoint, the new partition from 0.
    expect(
      second.restoreStart(
        new Map([
          [0, 20n],
          [1, 4n],
        ]),
      ),
    ).toEqual({
      from: new Map([
        [0, 12n],
        [1, 0n],
      ]),
      resumed: true,
    });
    expect(second.get("k")?.equals(value(1))).toBe(true);
    await second.close();
  });

  it("forgets its contents when they may be ahead of the topic (a commit over budget since the checkpoint) or the topic is shorter than its checkpoint (recreated)", async () => {
    const ahead = join(root, "ahead");
    const first = new OnDiskKeyValueStore("published-results", openStoreDirectory(ahead, BUDGET));
    first.put("k", value(1));
    await first.checkpoint(new Map([[0, 1n]]));
    // Enough writes to go over the budget: they are committed (to evict) before the topic has them.
    for (let index = 0; index < 500; index++) first.put(`key-${String(index)}`, value(index));
    await first.settled();
    expect(first.get("key-0")?.equals(value(0))).toBe(true);
    await first.close();
    const reopened = new OnDiskKeyValueStore("published-results", openStoreDirectory(ahead, BUDGET));
    expect(reopened.size).toBe(0);
    expect(reopened.get("k")).toBeUndefined();
    expect(reopened.get("key-0")).toBeUndefined();
    expect(reopened.restoreStart(new Map([[0, 501n]]))).toEqual({ from: new Map([[0, 0n]]), resumed: false });
    // Checkpointed again once its writes are acknowledged, it is trusted again.
    reopened.put("k", value(1));
    await reopened.checkpoint(new Map([[0, 502n]]));
    await reopened.close();

    const recreated = new OnDiskKeyValueStore("published-results", openStoreDirectory(ahead, BUDGET));
    expect(recreated.size).toBe(1);
    expect(recreated.restoreStart(new Map([[0, 3n]]))).toEqual({ from: new Map([[0, 0n]]), resumed: false });
    expect(recreated.size).toBe(0);
    expect(recreated.get("k")).toBeUndefined();
    await recreated.close();
  });

  it("checkpointed in another value format (a new schema version), keeps its contents and offsets but does not count as resumed, so its writer compares everything", async () => {
    const directory = join(root, "format");
    const first = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    first.put("k", value(1));
    await first.checkpoint(new Map([[0, 7n]]), "avro:1");
    await first.close();
    const same = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    expect(same.restoreStart(new Map([[0, 9n]]), "avro:1")).toEqual({ from: new Map([[0, 7n]]), resumed: true });
    await same.close();
    const upgraded = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    expect(upgraded.restoreStart(new Map([[0, 9n]]), "avro:2")).toEqual({ from: new Map([[0, 7n]]), resumed: false });
    expect(upgraded.get("k")?.equals(value(1))).toBe(true);
    await upgraded.close();
  });

  it("refuses a directory another live process holds, and releases it on close", async () => {
    const directory = join(root, "locked");
    const store = new OnDiskKeyValueStore("published-results", openStoreDirectory(directory, BUDGET));
    await store.close();
    expect(existsSync(join(directory, "LOCK.pid"))).toBe(false);
    writeFileSync(join(directory, "LOCK.pid"), String(process.ppid));
    expect(() => openStoreDirectory(directory, BUDGET)).toThrow(StateDirectoryLockedError);
  });
});
