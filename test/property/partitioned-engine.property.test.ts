import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shippedCatalog, type CatalogSummary } from "../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import type { Conflict } from "../../src/metrics/fact-ledger.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import { PartitionedEngine, type Schedule } from "../../src/partitioned/partitioned-engine.ts";
import { factsArb, RUNS } from "../support/fact-arbitraries.ts";

/**
 * Issue #13 Part 2: the partitioned engine (fact ledger by fact_id, domain ledger by identity,
 * entity stage by bundle with pushes and subscriptions, aggregation by result group) gives the
 * single engine's results byte for byte, and the same conflicts, for any partition count, any
 * arrival order, and any interleaving and batching of the stages' channels, with the records
 * passed as objects or encoded and decoded as their topics would carry them.
 */

const SHIPPED = shippedCatalog();
/** Every minimum_sample lowered to 1, so small fact sets publish values (and not only coverage). */
const MINIMUM_ONE: CatalogSummary = {
  ...SHIPPED,
  metrics: new Map([...SHIPPED.metrics].map(([id, definition]) => [id, { ...definition, minimumSample: 1 }])),
};

/** A seeded schedule: which open channel goes next, how much of it, and whether its reader flushes after it, drawn from mulberry32. */
function seededSchedule(seed: number): Schedule {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    channel: (count) => Math.floor(next() * count),
    batch: (available) => 1 + Math.floor(next() * available),
    flushAfterBatch: () => next() < 0.5,
  };
}

/** Conflicts compared as reports: versions of one fact_id are listed in arrival order by both engines, so they are sorted here. */
function normalized(conflicts: readonly Conflict[]): Conflict[] {
  return conflicts.map((conflict) => ({
    ...conflict,
    versions: [...conflict.versions].sort((a, b) =>
      a.factId === b.factId ? String(a.origin).localeCompare(String(b.origin)) : a.factId < b.factId ? -1 : 1,
    ),
  }));
}

/**
 * The single engine over the same arrivals. (Which line a redelivered version is reported at is the
 * first one read, in both engines; the results do not depend on order: engine.property.test.ts.)
 */
function single(
  arrivals: readonly { fact: MetricFact; line: number }[],
  catalog: CatalogSummary,
): { lines: string[]; conflicts: Conflict[] } {
  const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, catalog);
  for (const { fact, line } of arrivals) engine.ingest(fact, line);
  return { lines: engine.results().map((entry) => entry.json), conflicts: normalized(engine.conflicts()) };
}

const caseArb = fc.record({
  facts: factsArb,
  order: fc.array(fc.nat(), { maxLength: 60 }),
  partitions: fc.constantFrom(1, 2, 3, 5),
  seed: fc.integer(),
  flushEvery: fc.integer({ min: 1, max: 8 }),
  minimumOne: fc.boolean(),
});

describe("partitioned engine (issue #13 Part 2)", { timeout: 300_000 }, () => {
  it("equals the single engine's results and conflicts for any partition count, order and schedule", () => {
    // How often the cross-partition paths ran, so the property cannot pass by never exercising them.
    const exercised = { runs: 0, pushed: 0, subscribed: 0, published: 0 };
    fc.assert(
      fc.property(caseArb, ({ facts, order, partitions, seed, flushEvery, minimumOne }) => {
        const catalog = minimumOne ? MINIMUM_ONE : SHIPPED;
        // Origins are the facts' lines in the original list, whatever order they arrive in.
        const arrival = facts
          .map((fact, index) => ({ fact, line: index + 1, rank: order[index] ?? 0 }))
          .sort((a, b) => a.rank - b.rank || a.line - b.line);
        const expected = single(arrival, catalog);
        const engine = new PartitionedEngine(DEFAULT_ENGINE_CONFIG, catalog, {
          partitions,
          schedule: seededSchedule(seed),
        });
        arrival.forEach(({ fact, line }, index) => {
          engine.ingest(fact, line);
          if ((index + 1) % flushEvery === 0) engine.run();
        });
        expect(engine.results().map((entry) => entry.json)).toEqual(expected.lines);
        expect(normalized(engine.conflicts())).toEqual(expected.conflicts);
        exercised.runs++;
        if (partitions > 1 && engine.traffic.pushes > 0) exercised.pushed++;
        if (partitions > 1 && engine.traffic.responses > 0) exercised.subscribed++;
        if (expected.lines.some((line) => line.includes('"status":"PUBLISHED"'))) exercised.published++;
      }),
      { numRuns: RUNS },
    );
    expect(exercised.pushed / exercised.runs).toBeGreaterThan(0.05);
    expect(exercised.subscribed / exercised.runs).toBeGreaterThan(0.05);
    expect(exercised.published / exercised.runs).toBeGreaterThan(0.2);
    console.info(`partitioned engine property: ${JSON.stringify(exercised)}`);
  });
});
