import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { openLmdbBackend, type StateBackend } from "../../../src/state/state-backend.ts";
import { MAX_FILTER_BYTES, StoredKeyFilter, withStoredKeyFilter } from "../../../src/state/stored-key-filter.ts";

const root = mkdtempSync(join(tmpdir(), "agentops-key-filter-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let directories = 0;
const fresh = (): string => join(root, `store-${String((directories += 1))}`);

/** The backend's point reads, counted. */
function countingReads(backend: StateBackend): { backend: StateBackend; reads: () => number } {
  let reads = 0;
  return {
    backend: {
      ...backend,
      get: (key) => {
        reads += 1;
        return backend.get(key);
      },
    },
    reads: () => reads,
  };
}

describe("StoredKeyFilter", () => {
  it("never says no to a key written since the store was empty", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: "binary", maxLength: 60 }), { maxLength: 3_000 }), (keys) => {
        const filter = new StoredKeyFilter(true);
        for (const key of keys) filter.add(key);
        for (const key of keys) expect(filter.mayHold(key)).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it("says no to most keys never written (false positives about 1%), across its segments", () => {
    const filter = new StoredKeyFilter(true);
    const written = 400_000;
    for (let index = 0; index < written; index++) filter.add(`fact\u0000${String(index)}`);
    expect(filter.bytes()).toBeGreaterThan(1 << 17);
    let maybe = 0;
    const asked = 100_000;
    for (let index = 0; index < asked; index++) if (filter.mayHold(`fact\u0000${String(written + index)}`)) maybe += 1;
    expect(maybe / asked).toBeLessThan(0.03);
  });

  it("answers maybe for every key of a store opened with data, and after its memory bound, until reset", () => {
    const opened = new StoredKeyFilter(false);
    opened.add("a");
    expect(opened.mayHold("never written")).toBe(true);
    opened.reset();
    expect(opened.mayHold("never written")).toBe(false);

    const bounded = new StoredKeyFilter(true);
    let index = 0;
    while (bounded.mayHold("never written") === false && index < 50_000_000) bounded.add(String(index++));
    expect(bounded.bytes()).toBe(0);
    expect(index).toBeGreaterThan((MAX_FILTER_BYTES * 8) / 20);
    expect(bounded.mayHold("anything")).toBe(true);
  });
});

describe("a backend behind the filter", () => {
  it("reads the store only for keys it may hold, and returns every value written", async () => {
    const lmdb = openLmdbBackend(fresh());
    const counted = countingReads(lmdb);
    const backend = withStoredKeyFilter(counted.backend);
    await backend.commit([
      ["k1", Buffer.from("one")],
      ["k2", Buffer.from("two")],
    ]);
    backend.commitNow?.([["k3", Buffer.from("three")]]);
    expect(backend.get("k1")?.toString()).toBe("one");
    expect(backend.get("k3")?.toString()).toBe("three");
    const before = counted.reads();
    for (let index = 0; index < 1_000; index++) expect(backend.get(`absent-${String(index)}`)).toBeUndefined();
    expect(counted.reads() - before).toBeLessThan(50);
    await backend.commit([["k2", null]]);
    expect(backend.get("k2")).toBeUndefined();
    await backend.close();
  });

  it("reads the store for every key when it was opened with data, and knows again after a clear", async () => {
    const directory = fresh();
    const first = openLmdbBackend(directory);
    await first.commit([["kept", Buffer.from("v")]]);
    await first.close();
    const counted = countingReads(openLmdbBackend(directory));
    const backend = withStoredKeyFilter(counted.backend);
    expect(backend.get("kept")?.toString()).toBe("v");
    for (let index = 0; index < 100; index++) backend.get(`absent-${String(index)}`);
    expect(counted.reads()).toBe(101);
    backend.clear();
    expect(backend.get("kept")).toBeUndefined();
    for (let index = 0; index < 100; index++) backend.get(`absent-${String(index)}`);
    expect(counted.reads()).toBeLessThan(110);
    await backend.close();
  });
});
