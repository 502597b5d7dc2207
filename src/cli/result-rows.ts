import type { Cohort, MetricResult, Scope } from "../contract/result-record.ts";
import { formatTable, wrapText } from "./text-table.ts";

export const RESULT_HEADERS = ["metric", "scope", "cohort", "status", "value", "coverage"];

/** A window's length in the largest whole unit: 1d, 6h, 15m, 30s, 250ms. */
function describeDuration(millis: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (millis % size === 0) return `${millis / size}${unit}`;
  return `${millis}ms`;
}

/** A scope in a few characters: `2026-10-01 +1d`, `2026-10-01 06:00 +6h`, `snapshot snap-0`. */
export function describeScope(scope: Scope): string {
  if (scope.kind === "snapshot") return `snapshot ${scope.snapshot_id}`;
  const start = scope.start.slice(0, 16).replace("T", " ");
  const length = describeDuration(Date.parse(scope.end) - Date.parse(scope.start));
  return `${start.endsWith(" 00:00") ? start.slice(0, 10) : start} +${length}`;
}

/** Every coordinate as key=value; `{}` is the metric's cohort-less record. */
export function describeCohort(cohort: Cohort): string {
  return (
    Object.entries(cohort)
      .map(([key, value]) => `${key}=${value}`)
      .join(", ") || "(no cohort)"
  );
}

/** The value, or why there is none: N/A and minimum-sample records are never shown as a number. */
export function describeValue(result: MetricResult): string {
  if (result.value === null) {
    if (result.status === "BELOW_MINIMUM_SAMPLE")
      return `below minimum sample: ${result.eligible_units} of ${result.minimum_sample}`;
    // The catalog's reasons read "N/A when ..."; anything else is prefixed so the status is never lost.
    if (result.na_reason === null) return "N/A";
    return result.na_reason.startsWith("N/A") ? result.na_reason : `N/A: ${result.na_reason}`;
  }
  if (typeof result.value === "number") {
    // Money is published in minor units of its own currency; say so rather than guess a decimal point.
    if (result.measures?.currency !== null && result.measures?.currency !== undefined)
      return `${result.value} ${result.measures.currency} minor units`;
    return Number.isInteger(result.value) ? String(result.value) : result.value.toFixed(4);
  }
  return Object.entries(result.value)
    .map(([category, share]) => `${category}=${share.toFixed(3)}`)
    .join(" ");
}

export function describeCoverage(result: MetricResult): string {
  const coverage = result.coverage;
  return `${coverage.numerator}/${coverage.denominator} ${coverage.state}${coverage.alert ? " LOW" : ""}`;
}

/** One table row per result, every coordinate spelled out (the `--table full` form). */
export function resultRow(result: MetricResult): string[] {
  const scope =
    result.scope.kind === "window"
      ? `${result.scope.start.slice(0, 16)}..${result.scope.end.slice(0, 16)}`
      : `snapshot ${result.scope.snapshot_id}`;
  return [
    result.metric_id,
    scope,
    Object.keys(result.cohort).length === 0 ? "-" : describeCohort(result.cohort).replaceAll(", ", ","),
    result.status,
    describeValue(result),
    describeCoverage(result),
  ];
}

/** Display order: by metric, then scope, then cohort — the output files keep the result-key order. */
export function byMetricScopeCohort(a: MetricResult, b: MetricResult): number {
  const left = [a.metric_id, JSON.stringify(a.scope), JSON.stringify(a.cohort)].join("\u0000");
  const right = [b.metric_id, JSON.stringify(b.scope), JSON.stringify(b.cohort)].join("\u0000");
  return left < right ? -1 : left > right ? 1 : 0;
}

const STATUS_LABEL: Record<MetricResult["status"], string> = {
  PUBLISHED: "published",
  BELOW_MINIMUM_SAMPLE: "below-min",
  NOT_AVAILABLE: "n/a",
};

/**
 * The cohort keys of one metric's results split into those every cohort-carrying result shares with
 * one value (said once, in the heading) and those that tell the results apart (the column).
 */
function splitCohortKeys(results: readonly MetricResult[]): { fixed: [string, string][]; varying: string[] } {
  const withCohort = results.filter((result) => Object.keys(result.cohort).length > 0);
  const keys = [...new Set(withCohort.flatMap((result) => Object.keys(result.cohort)))].sort();
  const fixed: [string, string][] = [];
  const varying: string[] = [];
  for (const key of keys) {
    const values = new Set(withCohort.map((result) => result.cohort[key]));
    const only = [...values][0];
    if (values.size === 1 && only !== undefined && withCohort.length > 1) fixed.push([key, only]);
    else varying.push(key);
  }
  return { fixed, varying };
}

/**
 * Every result grouped by metric, to fit `width` columns: a heading per metric names its scope kind
 * and the cohort keys in column order, so each row shows only the values that tell cohorts apart.
 * Long cohorts, categorical values and N/A reasons wrap within their columns.
 */
export function formatGroupedResults(results: readonly MetricResult[], width: number): string {
  const byMetric = new Map<string, MetricResult[]>();
  for (const result of [...results].sort(byMetricScopeCohort))
    byMetric.set(result.metric_id, [...(byMetric.get(result.metric_id) ?? []), result]);
  const sections: string[] = [];
  for (const [metricId, group] of byMetric) {
    const { fixed, varying } = splitCohortKeys(group);
    const kinds = [...new Set(group.map((result) => result.scope.kind))].join("/");
    const heading = [`${metricId} (${kinds}${group.length === 1 ? ", 1 result" : `, ${group.length} results`})`];
    if (fixed.length > 0) heading.push(`every cohort: ${fixed.map(([key, value]) => `${key}=${value}`).join(", ")}`);
    if (varying.length > 0) heading.push(`cohort = ${varying.join(" · ")}`);
    const rows = group.map((result) => [
      describeScope(result.scope),
      Object.keys(result.cohort).length === 0
        ? "(no cohort)"
        : varying.map((key) => result.cohort[key] ?? "-").join(" · "),
      STATUS_LABEL[result.status],
      describeValue(result),
      describeCoverage(result),
    ]);
    const table = formatTable(["scope", "cohort", "status", "value", "coverage"], rows, { width, wrap: [1, 3] });
    sections.push(`${heading.flatMap((line) => wrapText(line, width)).join("\n")}\n${table}`);
  }
  return sections.join("\n\n");
}
