import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../src/catalog/metric-definitions.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import { PartitionedEngine } from "../../src/partitioned/partitioned-engine.ts";
import { openLmdbBackend, type StateBackend } from "../../src/state/state-backend.ts";
import { StateStore } from "../../src/state/state-store.ts";
import { factsArb, RUNS } from "../support/fact-arbitraries.ts";

/**
 * The partitioned engine's stages keep their state in the engine's keyed store. Over LMDB with a
 * record cache of 0 bytes (every clean entry evicted at each commit, so every read after it goes
 * to disk and through the codecs), 2 KB, or unbounded, committed at random points, with records
 * encoded on every hop, the results and conflicts equal the single engine's.
 */

const CATALOG = shippedCatalog();
const root = mkdtempSync(join(tmpdir(), "agentops-partitioned-state-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

describe("partitioned engine with its stage state on disk", { timeout: 600_000 }, () => {
  it("equals the single engine for any cache size and commit points", async () => {
    // Reads that went to disk in the 0-byte-cache runs: the property is about the store, so it must have been read.
    let diskReads = 0;
    await fc.assert(
      fc.asyncProperty(
        factsArb,
        fc.constantFrom(1, 3),
        fc.constantFrom(0, 2_000, 1 << 30),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
        async (facts, partitions, budgetBytes, commits) => {
          const single = new MetricEngine(DEFAULT_ENGINE_CONFIG, CATALOG);
          facts.forEach((fact, index) => single.ingest(fact, index + 1));
          const directory = join(root, `run-${String((runs += 1))}`);
          const backends: StateBackend[] = [];
          const stores: StateStore[] = [];
          const engine = new PartitionedEngine(DEFAULT_ENGINE_CONFIG, CATALOG, {
            partitions,
            state: (stage, partition) => {
              const backend = openLmdbBackend(join(directory, `${stage}-${String(partition)}`));
              backends.push(backend);
              const store = new StateStore(backend, budgetBytes);
              stores.push(store);
              return store;
            },
          });
          try {
            let position = 0;
            for (const take of [...commits, facts.length]) {
              for (const fact of facts.slice(position, position + take)) engine.ingest(fact, (position += 1));
              await engine.commit();
            }
            expect(engine.results().map((entry) => entry.json)).toEqual(single.results().map((entry) => entry.json));
            expect(engine.conflicts().map((conflict) => conflict.identity)).toEqual(
              single.conflicts().map((conflict) => conflict.identity),
            );
            if (budgetBytes === 0) diskReads += stores.reduce((sum, store) => sum + store.stats().misses, 0);
          } finally {
            await Promise.all(backends.map((backend) => backend.close()));
          }
        },
      ),
      { numRuns: Math.max(10, Math.round(RUNS / 4)) },
    );
    expect(diskReads).toBeGreaterThan(0);
  });
});
