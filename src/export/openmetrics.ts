import type { MetricResult, Scope } from "../contract/result-record.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { resultKey } from "../metrics/scope.ts";
import { isMetricId } from "../catalog/metric-ids.ts";

/**
 * The results as OpenMetrics text (https://prometheus.io/docs/specs/om/open_metrics_spec/): the
 * latest scope of every metric, one set of series per cohort. The exporter only reshapes records:
 * it never sums, converts or fills in a value, so a money slice keeps its currency, source and
 * cost basis as labels and a result without a value has no value sample.
 */

export const OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/** The cohort coordinates of contract §4, in label order; any other cohort key is not exported. */
export const COHORT_LABELS = [
  "provider",
  "model",
  "role",
  "runtime",
  "role_template",
  "direction",
  "currency",
  "source",
  "cost_basis",
] as const;

export interface ExportLimits {
  /** (scope, cohort) pairs exported per metric; the rest are counted in agentops_export_cohorts_folded. */
  readonly maxCohortsPerMetric: number;
  /** A cohort, snapshot id or category longer than this is folded, never truncated (two would collide). */
  readonly maxLabelValueLength: number;
  /** na_reason is free text: cut to this many characters in its info label. */
  readonly maxReasonLength: number;
}

export const DEFAULT_EXPORT_LIMITS: ExportLimits = {
  maxCohortsPerMetric: 100,
  maxLabelValueLength: 256,
  maxReasonLength: 512,
};

type FamilyType = "gauge" | "stateset" | "info";

export interface Family {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
}

/** Every series family the exporter serves, in output order; the dashboard test checks its queries against it. */
export const FAMILIES = {
  value: {
    name: "agentops_metric_value",
    type: "gauge",
    help: "Published value (money in minor units of the currency label); absent unless status is PUBLISHED",
  },
  numerator: {
    name: "agentops_metric_numerator",
    type: "gauge",
    help: "Rate numerator (per category for per-category rates)",
  },
  denominator: { name: "agentops_metric_denominator", type: "gauge", help: "Rate denominator" },
  eligibleUnits: {
    name: "agentops_metric_eligible_units",
    type: "gauge",
    help: "Units the value is computed over, compared with the minimum sample",
  },
  minimumSample: {
    name: "agentops_metric_minimum_sample",
    type: "gauge",
    help: "The catalog's minimum sample for this metric",
  },
  status: {
    name: "agentops_metric_status",
    type: "stateset",
    help: "Result status: PUBLISHED, NOT_AVAILABLE or BELOW_MINIMUM_SAMPLE",
  },
  naReason: { name: "agentops_metric_na_reason", type: "info", help: "Why a NOT_AVAILABLE result has no value" },
  coverageNumerator: { name: "agentops_metric_coverage_numerator", type: "gauge", help: "Covered candidate units" },
  coverageDenominator: { name: "agentops_metric_coverage_denominator", type: "gauge", help: "Candidate units" },
  coverageRatio: {
    name: "agentops_metric_coverage_ratio",
    type: "gauge",
    help: "Coverage numerator / denominator; absent when the denominator is 0",
  },
  coverageState: {
    name: "agentops_metric_coverage_state",
    type: "stateset",
    help: "Coverage state: NO_POPULATION, NO_COVERAGE, PARTIAL or FULL",
  },
  lowCoverage: {
    name: "agentops_metric_low_coverage",
    type: "gauge",
    help: "1 when coverage is below its threshold (LOW_COVERAGE), else 0",
  },
  coverageThreshold: {
    name: "agentops_metric_coverage_threshold_ratio",
    type: "gauge",
    help: "LOW_COVERAGE threshold as a ratio (0 = off)",
  },
  scopeEnd: {
    name: "agentops_metric_scope_end_seconds",
    type: "gauge",
    help: "End of the exported window, or the snapshot cutoff (Unix seconds)",
  },
  asOf: {
    name: "agentops_metric_as_of_seconds",
    type: "gauge",
    help: "Greatest contributing event time (Unix seconds)",
  },
  cohorts: {
    name: "agentops_export_cohorts",
    type: "gauge",
    help: "Cohorts of the metric's latest scope, exported or folded",
  },
  folded: {
    name: "agentops_export_cohorts_folded",
    type: "gauge",
    help: "Cohorts of the latest scope not exported (over the limit or unexportable labels)",
  },
} as const satisfies Record<string, Family>;

const STATUSES = ["PUBLISHED", "NOT_AVAILABLE", "BELOW_MINIMUM_SAMPLE"] as const;
const COVERAGE_STATES = ["NO_POPULATION", "NO_COVERAGE", "PARTIAL", "FULL"] as const;

/** The sample name of a family: an info family's samples end in _info. */
export function sampleName(family: Family): string {
  return family.type === "info" ? `${family.name}_info` : family.name;
}

/** Every sample name the exporter can write. */
export function sampleNames(): string[] {
  return Object.values(FAMILIES).map(sampleName);
}

export type Labels = readonly (readonly [string, string])[];

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

/** One family's samples, in no particular order. */
export interface FamilySamples {
  readonly family: Family;
  readonly samples: readonly Sample[];
}

/** The end of a scope in epoch ms: a window's end, a snapshot's cutoff. */
function scopeEnd(scope: Scope): number {
  return Date.parse(scope.kind === "window" ? scope.end : scope.cutoff);
}

function scopeStart(scope: Scope): number {
  return scope.kind === "window" ? Date.parse(scope.start) : Date.parse(scope.cutoff);
}

/** Only catalog metrics and well-formed scopes: a record naming anything else cannot become a trusted label. */
function readableIdentity(result: MetricResult): boolean {
  const kind: string = result.scope.kind;
  if (!isMetricId(result.metric_id) || (kind !== "window" && kind !== "snapshot")) return false;
  return Number.isFinite(scopeEnd(result.scope)) && Number.isFinite(scopeStart(result.scope));
}

/**
 * The results of each metric's latest scope: the window with the greatest end (then the latest
 * start), or every snapshot whose cutoff is the greatest (snapshots are distinct populations).
 */
export function latestScopeResults(results: Iterable<MetricResult>): Map<string, MetricResult[]> {
  const byMetric = new Map<string, MetricResult[]>();
  for (const result of results) {
    if (!readableIdentity(result)) continue;
    const list = byMetric.get(result.metric_id);
    if (list === undefined) byMetric.set(result.metric_id, [result]);
    else list.push(result);
  }
  const latest = new Map<string, MetricResult[]>();
  for (const [metric, list] of byMetric) {
    const newest = list.reduce((best, result) => {
      const later = scopeEnd(result.scope) - scopeEnd(best.scope) || scopeStart(result.scope) - scopeStart(best.scope);
      return later > 0 ? result : best;
    });
    const end = scopeEnd(newest.scope);
    const start = scopeStart(newest.scope);
    const sameScope = (result: MetricResult): boolean =>
      result.scope.kind === newest.scope.kind &&
      scopeEnd(result.scope) === end &&
      (result.scope.kind === "snapshot" || scopeStart(result.scope) === start);
    latest.set(metric, list.filter(sameScope));
  }
  return latest;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A label value the text format can carry unchanged: bounded, non-empty, well-formed UTF-16. */
function exportableText(value: string, limits: ExportLimits): boolean {
  return value.length > 0 && value.length <= limits.maxLabelValueLength && !LONE_SURROGATE.test(value);
}

/** The identifying labels of one result, or null when its cohort cannot be exported as labels. */
function identityLabels(result: MetricResult, limits: ExportLimits): Labels | null {
  const labels: [string, string][] = [
    ["metric", result.metric_id],
    ["scope_kind", result.scope.kind],
  ];
  if (result.scope.kind === "snapshot") {
    if (!exportableText(result.scope.snapshot_id, limits)) return null;
    labels.push(["snapshot", result.scope.snapshot_id]);
  }
  const known = new Set<string>(COHORT_LABELS);
  for (const key of Object.keys(result.cohort)) if (!known.has(key)) return null;
  for (const name of COHORT_LABELS) {
    const value = result.cohort[name];
    if (value === undefined) continue;
    if (!exportableText(value, limits)) return null;
    labels.push([name, value]);
  }
  return labels;
}

/** OpenMetrics label value escaping: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function formatLabels(labels: Labels): string {
  if (labels.length === 0) return "";
  return `{${labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(",")}}`;
}

/** A number as OpenMetrics writes it: integers without a fraction, others in their shortest round-trip form. */
function formatNumber(value: number): string {
  return Number.isInteger(value) ? value.toFixed(0) : String(value);
}

function cutReason(text: string, limits: ExportLimits): string {
  const chars = [...text];
  return chars.length <= limits.maxReasonLength ? text : `${chars.slice(0, limits.maxReasonLength - 1).join("")}…`;
}

class SampleSink {
  private readonly byFamily = new Map<string, Sample[]>();

  add(family: Family, labels: Labels, value: number | null | undefined): void {
    // A missing or non-finite number is never written as 0: the sample is left out.
    if (value === null || value === undefined || !Number.isFinite(value)) return;
    const list = this.byFamily.get(family.name);
    if (list === undefined) this.byFamily.set(family.name, [{ labels, value }]);
    else list.push({ labels, value });
  }

  stateset(family: Family, labels: Labels, states: readonly string[], current: string): void {
    for (const state of states) this.add(family, [...labels, [family.name, state]], state === current ? 1 : 0);
  }

  families(): FamilySamples[] {
    const all: Family[] = Object.values(FAMILIES);
    return all.map((family) => ({ family, samples: this.byFamily.get(family.name) ?? [] }));
  }
}

function formatOpenMetrics(families: readonly FamilySamples[]): string {
  const lines: string[] = [];
  for (const { family, samples } of families) {
    lines.push(`# TYPE ${family.name} ${family.type}`, `# HELP ${family.name} ${family.help}`);
    const name = sampleName(family);
    const formatted = samples.map((entry) => `${name}${formatLabels(entry.labels)} ${formatNumber(entry.value)}`);
    lines.push(...formatted.sort(byUtf8));
  }
  lines.push("# EOF");
  return `${lines.join("\n")}\n`;
}

function addResult(sink: SampleSink, result: MetricResult, labels: Labels, limits: ExportLimits): boolean {
  const { value, measures, coverage } = result;
  const categoryLabels = (category: string): Labels | null =>
    exportableText(category, limits) ? [...labels, ["category", category]] : null;
  if (result.status === "PUBLISHED") {
    if (typeof value === "number") sink.add(FAMILIES.value, labels, value);
    else if (value !== null) {
      for (const category of Object.keys(value)) if (categoryLabels(category) === null) return false;
      for (const [category, quotient] of Object.entries(value)) {
        sink.add(FAMILIES.value, categoryLabels(category) ?? labels, quotient);
      }
    }
    if (measures?.categories !== null && measures?.categories !== undefined) {
      for (const [category, count] of Object.entries(measures.categories)) {
        const withCategory = categoryLabels(category);
        if (withCategory !== null) sink.add(FAMILIES.numerator, withCategory, count);
      }
    } else sink.add(FAMILIES.numerator, labels, measures?.numerator);
    sink.add(FAMILIES.denominator, labels, measures?.denominator);
  }
  sink.add(FAMILIES.eligibleUnits, labels, result.eligible_units);
  sink.add(FAMILIES.minimumSample, labels, result.minimum_sample);
  sink.stateset(FAMILIES.status, labels, STATUSES, result.status);
  if (result.status === "NOT_AVAILABLE" && typeof result.na_reason === "string") {
    sink.add(FAMILIES.naReason, [...labels, ["reason", cutReason(result.na_reason, limits)]], 1);
  }
  sink.add(FAMILIES.coverageNumerator, labels, coverage.numerator);
  sink.add(FAMILIES.coverageDenominator, labels, coverage.denominator);
  sink.add(FAMILIES.coverageRatio, labels, coverage.raw_ratio);
  sink.stateset(FAMILIES.coverageState, labels, COVERAGE_STATES, coverage.state);
  sink.add(FAMILIES.lowCoverage, labels, coverage.alert ? 1 : 0);
  sink.add(FAMILIES.coverageThreshold, labels, coverage.threshold_hundredths / 100);
  sink.add(FAMILIES.scopeEnd, labels, scopeEnd(result.scope) / 1000);
  if (result.as_of !== null) sink.add(FAMILIES.asOf, labels, Date.parse(result.as_of) / 1000);
  return true;
}

/** Eligible units for ranking; a record from a file may lack them, and NaN would make the order arbitrary. */
function rankUnits(result: MetricResult): number {
  return Number.isFinite(result.eligible_units) ? result.eligible_units : 0;
}

/**
 * The samples of the latest scope of every metric. Per metric, at most `maxCohortsPerMetric`
 * cohorts are exported, those with the most eligible units first (then by result key), so the
 * choice depends on the records only; the others are counted, never merged into a value.
 */
export function collectFamilies(
  results: Iterable<MetricResult>,
  limits: ExportLimits = DEFAULT_EXPORT_LIMITS,
): FamilySamples[] {
  const sink = new SampleSink();
  for (const [metric, list] of latestScopeResults(results)) {
    const ranked = list
      .map((result) => ({ result, key: resultKey(result.metric_id, result.scope, result.cohort) }))
      .sort((left, right) => rankUnits(right.result) - rankUnits(left.result) || byUtf8(left.key, right.key));
    let exported = 0;
    for (const { result } of ranked) {
      if (exported >= limits.maxCohortsPerMetric) break;
      const labels = identityLabels(result, limits);
      if (labels !== null && addResult(sink, result, labels, limits)) exported += 1;
    }
    const scopeKind = list[0]?.scope.kind ?? "window";
    const metricLabels: Labels = [
      ["metric", metric],
      ["scope_kind", scopeKind],
    ];
    sink.add(FAMILIES.cohorts, metricLabels, list.length);
    sink.add(FAMILIES.folded, metricLabels, list.length - exported);
  }
  return sink.families();
}

/** The OpenMetrics text of `collectFamilies`: families in a fixed order, samples sorted, `# EOF` last. */
export function renderOpenMetrics(
  results: Iterable<MetricResult>,
  limits: ExportLimits = DEFAULT_EXPORT_LIMITS,
): string {
  return formatOpenMetrics(collectFamilies(results, limits));
}
