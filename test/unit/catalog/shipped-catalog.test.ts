import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROBLEM_CODES } from "../../../src/catalog/catalog-types.ts";
import { METRIC_IDS, metricDefinition, shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { publicationProblems } from "../../../src/catalog/publication-checks.ts";
import { validateCatalog } from "../../../src/catalog/validate-catalog.ts";
import { EVALUATION_DIR, readJson, REPO_ROOT, shippedCatalogJson, shippedPublicationJson } from "./fixture-support.ts";

interface RawMetric {
  metric_id: string;
  version: string;
  name: string;
  value_semantics: { kind: string; unit: string; missing: string };
  minimum_sample: number;
}
interface RawCatalog {
  catalog_id: string;
  version: string;
  coverage_policy: { default_threshold_hundredths: number };
  metrics: RawMetric[];
}

describe("the shipped catalog", () => {
  it("validates with no problems", () => {
    expect(validateCatalog(shippedCatalogJson())).toEqual([]);
  });

  it("is matched by its publication record", () => {
    expect(publicationProblems(shippedPublicationJson(), shippedCatalogJson())).toEqual([]);
  });

  it("declares exactly the METRIC_IDS set", () => {
    const raw = shippedCatalogJson() as RawCatalog;
    expect(new Set(raw.metrics.map((m) => m.metric_id))).toEqual(new Set(METRIC_IDS));
    expect(raw.metrics).toHaveLength(14);
  });

  it("keeps every missing text an N/A condition that never states a zero", () => {
    for (const metric of (shippedCatalogJson() as RawCatalog).metrics) {
      expect(metric.value_semantics.missing.startsWith("N/A when ")).toBe(true);
    }
  });

  it("ships example.json as a valid metric record equal to the shipped one", () => {
    const example = readJson(`${EVALUATION_DIR}example.json`) as RawMetric;
    const raw = shippedCatalogJson() as RawCatalog;
    const index = raw.metrics.findIndex((m) => m.metric_id === example.metric_id);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(example).toEqual(raw.metrics[index]);
    const withExample = { ...raw, metrics: raw.metrics.map((m, i) => (i === index ? example : m)) };
    expect(validateCatalog(withExample)).toEqual([]);
  });
});

describe("shippedCatalog() reads its metadata from the JSON file", () => {
  const raw = shippedCatalogJson() as RawCatalog;
  const summary = shippedCatalog();

  it("names the catalog revision and default threshold from the file", () => {
    expect(summary.catalogRevision).toBe(`${raw.catalog_id}@${raw.version}`);
    expect(summary.catalogRevision).toBe("agentops.evaluation.metric-catalog@1.0.0");
    expect(summary.defaultThresholdHundredths).toBe(raw.coverage_policy.default_threshold_hundredths);
  });

  it.each(raw.metrics.map((m) => [m.metric_id, m] as const))("%s equals its record", (id, record) => {
    const definition = summary.metrics.get(id as (typeof METRIC_IDS)[number]);
    expect(definition).toEqual({
      metricId: record.metric_id,
      version: record.version,
      name: record.name,
      kind: record.value_semantics.kind,
      unit: record.value_semantics.unit,
      missing: record.value_semantics.missing,
      minimumSample: record.minimum_sample,
    });
    expect(metricDefinition(id as (typeof METRIC_IDS)[number])).toBe(definition);
  });

  it("is cached: the same object on every call", () => {
    expect(shippedCatalog()).toBe(summary);
  });

  it("has the seed's minimum samples (20 for the five small-sample metrics, 1 otherwise)", () => {
    const twenty = [
      "role-template-rework-rate",
      "role-template-trajectory-partial-cost",
      "role-model-task-outcome-rate",
      "trajectory-partial-cost",
      "task-cohort-comparison-eligibility",
    ];
    for (const id of METRIC_IDS) expect(metricDefinition(id).minimumSample, id).toBe(twenty.includes(id) ? 20 : 1);
  });
});

describe("docs/catalog.md", () => {
  it("documents every problem code", () => {
    const docs = readFileSync(`${REPO_ROOT}docs/catalog.md`, "utf8");
    for (const code of Object.keys(PROBLEM_CODES)) expect(docs, code).toContain(`\`${code}\``);
  });
});
