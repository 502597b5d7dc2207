import { formatProblem, type MetricCatalogDocument } from "./catalog-types.ts";
import { loadJsonFile, SHIPPED_CATALOG_URL } from "./load-catalog.ts";
import { METRIC_IDS, type MetricId } from "./metric-ids.ts";
import { validateCatalog } from "./validate-catalog.ts";
import { InvariantError } from "../errors.ts";

/**
 * The accessor the rest of the project uses for metric metadata. Versions, names, kinds, units,
 * N/A texts and minimum samples come from the shipped catalog file
 * (system-contracts/evaluation/metric-catalog.json), validated once; only the identities live in
 * code (METRIC_IDS), and the validator checks the file declares exactly those.
 */

export { METRIC_IDS, type MetricId };

export type ValueKind = "rate" | "count" | "duration" | "quantity" | "money";

export interface MetricDefinition {
  readonly metricId: MetricId;
  readonly version: string;
  readonly name: string;
  readonly kind: ValueKind;
  readonly unit: string;
  readonly missing: string;
  readonly minimumSample: number;
}

export interface CatalogSummary {
  /** e.g. "agentops.evaluation.metric-catalog@1.0.0" */
  readonly catalogRevision: string;
  readonly defaultThresholdHundredths: number;
  readonly metrics: ReadonlyMap<MetricId, MetricDefinition>;
}

/** Builds the summary of a catalog document that has already passed validateCatalog. */
export function summarizeCatalog(document: MetricCatalogDocument): CatalogSummary {
  const metrics = new Map<MetricId, MetricDefinition>();
  for (const id of METRIC_IDS) {
    const record = document.metrics.find((metric) => metric.metric_id === id);
    if (record === undefined) throw new InvariantError({ problem: `metric catalog declares no record for ${id}` });
    metrics.set(
      id,
      Object.freeze({
        metricId: id,
        version: record.version,
        name: record.name,
        kind: record.value_semantics.kind as ValueKind,
        unit: record.value_semantics.unit,
        missing: record.value_semantics.missing,
        minimumSample: record.minimum_sample,
      }),
    );
  }
  return Object.freeze({
    catalogRevision: `${document.catalog_id}@${document.version}`,
    defaultThresholdHundredths: document.coverage_policy.default_threshold_hundredths,
    metrics,
  });
}

let cached: CatalogSummary | undefined;

/** Loads and validates the shipped catalog once (synchronously, cached); throws if it is invalid. */
export function shippedCatalog(): CatalogSummary {
  if (cached !== undefined) return cached;
  const loaded = loadJsonFile(SHIPPED_CATALOG_URL, "catalog");
  const problems = loaded.ok ? validateCatalog(loaded.document) : loaded.problems;
  if (!loaded.ok || problems.length > 0) {
    throw new InvariantError({
      problem: `the shipped metric catalog is invalid:\n${problems.map(formatProblem).join("\n")}`,
    });
  }
  cached = summarizeCatalog(loaded.document as MetricCatalogDocument);
  return cached;
}

export function metricDefinition(id: MetricId): MetricDefinition {
  const definition = shippedCatalog().metrics.get(id);
  if (definition === undefined) throw new InvariantError({ problem: `unknown metric id ${String(id)}` });
  return definition;
}
