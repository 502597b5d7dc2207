import type { MetricResult } from "../metrics/result-record.ts";

export const RESULT_HEADERS = ["metric", "scope", "cohort", "status", "value", "coverage"];

function describeScope(result: MetricResult): string {
  return result.scope.kind === "window" ? `${result.scope.start.slice(0, 16)}..${result.scope.end.slice(0, 16)}` : `snapshot ${result.scope.snapshot_id}`;
}

function describeValue(result: MetricResult): string {
  if (result.value === null) return result.status === "BELOW_MINIMUM_SAMPLE" ? `(below ${result.minimum_sample})` : "N/A";
  if (typeof result.value === "number") {
    // Money is published in minor units of its own currency; say so rather than guess a decimal point.
    if (result.measures?.currency !== null && result.measures?.currency !== undefined) return `${result.value} ${result.measures.currency} minor units`;
    return Number.isInteger(result.value) ? String(result.value) : result.value.toFixed(4);
  }
  return Object.entries(result.value)
    .map(([category, share]) => `${category}=${share.toFixed(3)}`)
    .join(" ");
}

/** One readable table row per result: value or why there is none, and the coverage beside it. */
export function resultRow(result: MetricResult): string[] {
  const coverage = result.coverage;
  return [
    result.metric_id,
    describeScope(result),
    Object.entries(result.cohort)
      .map(([key, value]) => `${key}=${value}`)
      .join(",") || "-",
    result.status,
    describeValue(result),
    `${coverage.numerator}/${coverage.denominator} ${coverage.state}${coverage.alert ? " LOW" : ""}`,
  ];
}


/** Display order: by metric, then scope, then cohort — the output files keep the result-key order. */
export function byMetricScopeCohort(a: MetricResult, b: MetricResult): number {
  const left = [a.metric_id, JSON.stringify(a.scope), JSON.stringify(a.cohort)].join("\u0000");
  const right = [b.metric_id, JSON.stringify(b.scope), JSON.stringify(b.cohort)].join("\u0000");
  return left < right ? -1 : left > right ? 1 : 0;
}
