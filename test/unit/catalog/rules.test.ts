import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { statesZero, startsWithNaWhen } from "../../../src/catalog/missing-text.ts";
import { REMOVED_METRIC_IDS, removedMetricNamedBy } from "../../../src/catalog/removed-metrics.ts";
import { validateCatalog } from "../../../src/catalog/validate-catalog.ts";
import { METRIC_IDS } from "../../../src/catalog/metric-ids.ts";
import { applyPatch, shippedCatalogJson } from "./fixture-support.ts";

describe("the never-zero missing rule", () => {
  it.each([
    "N/A when no eligible terminal Delivery with a direct C55 elapsed time exists; unavailable is never zero",
    "N/A when no call; never 0",
    "N/A when unavailable; not a zero",
    "N/A when no governance 0.2 packet exists",
    "N/A when C05 is absent",
  ])("allows %s", (text) => {
    expect(startsWithNaWhen(text)).toBe(true);
    expect(statesZero(text)).toBe(false);
  });

  it.each([
    "N/A when x; reported as 0",
    "N/A when x = 0",
    "N/A when x, the value is 0.",
    "N/A when none; the cost is zero",
    "N/A when none; 0 tokens",
    "N/A when absent (treated as zero)",
  ])("rejects %s", (text) => {
    expect(statesZero(text)).toBe(true);
  });

  it("requires the exact prefix", () => {
    expect(startsWithNaWhen("n/a when x")).toBe(false);
    expect(startsWithNaWhen("N/A whenever")).toBe(false);
    expect(startsWithNaWhen("Value is N/A when x")).toBe(false);
  });
});

describe("removed metrics", () => {
  it.each(REMOVED_METRIC_IDS.map((id) => [id]))("%s is recognised as id, human name, snake and camel case", (id) => {
    const words = id.split("-");
    expect(removedMetricNamedBy(id)).toBe(id);
    expect(removedMetricNamedBy(words.join(" ").replace(/^./, (c) => c.toUpperCase()))).toBe(id);
    expect(removedMetricNamedBy(`alias ${words.join("_")}`)).toBe(id);
    expect(removedMetricNamedBy(words.map((w) => w[0]?.toUpperCase() + w.slice(1)).join(""))).toBe(id);
  });

  it("does not flag the 14 surviving ids", () => {
    for (const id of METRIC_IDS) expect(removedMetricNamedBy(id)).toBeUndefined();
  });

  it("flags a removed metric wherever a text names it", () => {
    fc.assert(
      fc.property(fc.constantFrom(...REMOVED_METRIC_IDS), fc.integer({ min: 0, max: 13 }), (id, index) => {
        const mutated = applyPatch(shippedCatalogJson(), [
          { op: "add", path: `/metrics/${index}/forbidden_inference/-`, value: `never preserve ${id}` },
        ]);
        return validateCatalog(mutated).some(
          (p) => p.code === "REMOVED_METRIC" && p.path.startsWith(`/metrics/${index}/forbidden_inference/`),
        );
      }),
      { numRuns: 30 },
    );
  });
});

describe("validator robustness", () => {
  it.each([null, 42, "catalog", [], {}])("reports problems for %j without throwing", (document) => {
    expect(validateCatalog(document).length).toBeGreaterThan(0);
  });

  it("reports a kind outside the enum once, with the specific code", () => {
    const problems = validateCatalog(
      applyPatch(shippedCatalogJson(), [{ op: "replace", path: "/metrics/5/value_semantics/kind", value: "score" }]),
    );
    expect(problems.map((p) => `${p.path} ${p.code}`)).toEqual(["/metrics/5/value_semantics/kind VALUE_KIND_INVALID"]);
  });

  it("reports every problem, not only the first", () => {
    const problems = validateCatalog(
      applyPatch(shippedCatalogJson(), [
        { op: "replace", path: "/metrics/0/minimum_sample", value: 3 },
        { op: "replace", path: "/coverage_policy/gates_publication", value: true },
        { op: "add", path: "/metrics/1/alias", value: "x" },
      ]),
    );
    expect(problems.map((p) => p.code).sort()).toEqual([
      "COVERAGE_GATES_PUBLICATION",
      "MINIMUM_SAMPLE_MISMATCH",
      "SCHEMA_UNKNOWN_FIELD",
    ]);
  });
});
