import type { MetricResult } from "../metrics/result-record.ts";

/** Counts a replay reports at the end: what came in, what was refused, what came out. */
export interface ReplayCounts {
  records: number;
  accepted: number;
  redeliveries: number;
  quarantined: number;
  agentEvents: number;
  rejected: Record<string, number>;
}

export interface MetricRow {
  readonly metricId: string;
  readonly records: number;
  readonly published: number;
  readonly belowMinimum: number;
  readonly notAvailable: number;
  readonly coverageAlerts: number;
  readonly coveredUnits: number;
  readonly candidateUnits: number;
}

/** One row per metric: how many result records and of which status, and pooled coverage. */
export function metricRows(results: readonly MetricResult[]): MetricRow[] {
  const rows = new Map<string, MetricRow>();
  for (const result of results) {
    const row = rows.get(result.metric_id) ?? { metricId: result.metric_id, records: 0, published: 0, belowMinimum: 0, notAvailable: 0, coverageAlerts: 0, coveredUnits: 0, candidateUnits: 0 };
    rows.set(result.metric_id, {
      ...row,
      records: row.records + 1,
      published: row.published + (result.status === "PUBLISHED" ? 1 : 0),
      belowMinimum: row.belowMinimum + (result.status === "BELOW_MINIMUM_SAMPLE" ? 1 : 0),
      notAvailable: row.notAvailable + (result.status === "NOT_AVAILABLE" ? 1 : 0),
      coverageAlerts: row.coverageAlerts + (result.coverage.alert ? 1 : 0),
      coveredUnits: row.coveredUnits + result.coverage.numerator,
      candidateUnits: row.candidateUnits + result.coverage.denominator,
    });
  }
  return [...rows.values()].sort((a, b) => (a.metricId < b.metricId ? -1 : 1));
}

/** A plain-text table: fixed-width columns, readable in a terminal and in CI logs. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)));
  // Numbers (and n/m fractions) align right, text aligns left.
  const numeric = (cell: string): boolean => /^-?[\d.,/ ]+$/.test(cell);
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (numeric(cell) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join("  ").trimEnd();
  return [line(headers), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

export function formatMetricTable(rows: readonly MetricRow[]): string {
  return formatTable(
    ["metric", "records", "published", "below-min", "n/a", "cov-alerts", "coverage"],
    rows.map((row) => [
      row.metricId,
      String(row.records),
      String(row.published),
      String(row.belowMinimum),
      String(row.notAvailable),
      String(row.coverageAlerts),
      row.candidateUnits === 0 ? "-" : `${row.coveredUnits}/${row.candidateUnits}`,
    ]),
  );
}
