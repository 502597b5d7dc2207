import { describe, expect, it } from "vitest";
import { BYTES_CODEC, ChangeLoggingKeyValueStore, writeChanged } from "../../../src/stream/stores/changelogging-store.ts";
import { InMemoryKeyValueStore } from "../../../src/stream/stores/key-value-store.ts";

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
