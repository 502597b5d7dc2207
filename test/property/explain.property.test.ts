import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shippedCatalog, type CatalogSummary } from "../../src/catalog/metric-definitions.ts";
import { groupKeyOfResult } from "../../src/lineage/group-keys.ts";
import { explainGroup } from "../../src/lineage/lineage.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import { expectUnitsAddUp } from "../support/explain-adds-up.ts";
import { RUNS, factsArb } from "../support/fact-arbitraries.ts";

/** Every minimum_sample lowered to 1, so small fact sets publish measures for every metric. */
const SHIPPED = shippedCatalog();
const MINIMUM_ONE: CatalogSummary = {
  ...SHIPPED,
  metrics: new Map([...SHIPPED.metrics].map(([id, definition]) => [id, { ...definition, minimumSample: 1 }])),
};

describe("explain: the explained units add up to the published figure", { timeout: 300_000 }, () => {
  it("for every group of every metric over generated fact sets (coverage, exclusions, numerator, denominator, sums)", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        // Lists spill to their overflow tables past one member, so explanations read those too.
        const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, MINIMUM_ONE, undefined, { inlineMembers: 1 });
        for (const fact of facts) engine.ingest(fact);
        const keys = engine.resultKeys();
        const groups = new Set(keys.map(groupKeyOfResult));
        const lineage = engine.lineage();
        let explainedRecords = 0;
        for (const group of groups) {
          const explanation = explainGroup(lineage, group);
          expectUnitsAddUp(explanation);
          explainedRecords += explanation.results.length;
          for (const unit of explanation.units)
            if (unit.status === "uncovered") expect(unit.missing.length).toBeGreaterThan(0);
        }
        // Every published record belongs to exactly one explained group.
        expect(explainedRecords).toBe(keys.length);
      }),
      { numRuns: RUNS },
    );
  });
});
