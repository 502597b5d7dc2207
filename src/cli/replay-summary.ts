import type { CoverageResult, MetricResult } from "../contract/result-record.ts";
import { describeCohort, describeScope } from "./result-rows.ts";
import { formatTable } from "./text-table.ts";

/** The result with the lowest coverage ratio of a metric, and where it is (scope and cohort). */
export interface LowestCoverage {
  readonly coverage: CoverageResult;
  readonly scope: string;
  readonly cohort: string;
}

export interface MetricRow {
  readonly metricId: string;
  readonly records: number;
  readonly published: number;
  readonly belowMinimum: number;
  readonly notAvailable: number;
  readonly coverageAlerts: number;
  /**
   * Coverage is a property of one result key: summing numerators and denominators across cohorts
   * and windows would count a money cohort's shared population once per slice, so the summary
   * names the weakest key instead. Undefined when no result of the metric has a population.
   */
  readonly lowest: LowestCoverage | undefined;
}

/** a/b < c/d without floating point: both denominators are positive unit counts. */
function lowerRatio(left: CoverageResult, right: CoverageResult): boolean {
  return left.numerator * right.denominator < right.numerator * left.denominator;
}

/**
 * One row per metric: how many result records of each status, how many raised LOW_COVERAGE, and
 * the lowest coverage among its results with its key. `results` in the output files' key order
 * makes the choice among equal ratios deterministic (the first key wins).
 */
export function metricRows(results: Iterable<MetricResult>): MetricRow[] {
  const fold = new MetricRowsFold();
  for (const result of results) fold.add(result);
  return fold.rows();
}

/** metricRows one result at a time, so that a replay's results need not be held to summarise them. */
export class MetricRowsFold {
  private readonly byMetric = new Map<string, MetricRow>();

  add(result: MetricResult): void {
    const row = this.byMetric.get(result.metric_id) ?? {
      metricId: result.metric_id,
      records: 0,
      published: 0,
      belowMinimum: 0,
      notAvailable: 0,
      coverageAlerts: 0,
      lowest: undefined,
    };
    const hasPopulation = result.coverage.denominator > 0;
    const lower = hasPopulation && (row.lowest === undefined || lowerRatio(result.coverage, row.lowest.coverage));
    this.byMetric.set(result.metric_id, {
      ...row,
      records: row.records + 1,
      published: row.published + (result.status === "PUBLISHED" ? 1 : 0),
      belowMinimum: row.belowMinimum + (result.status === "BELOW_MINIMUM_SAMPLE" ? 1 : 0),
      notAvailable: row.notAvailable + (result.status === "NOT_AVAILABLE" ? 1 : 0),
      coverageAlerts: row.coverageAlerts + (result.coverage.alert ? 1 : 0),
      lowest: lower
        ? { coverage: result.coverage, scope: describeScope(result.scope), cohort: describeCohort(result.cohort) }
        : row.lowest,
    });
  }

  rows(): MetricRow[] {
    return [...this.byMetric.values()].sort((a, b) => (a.metricId < b.metricId ? -1 : 1));
  }
}

function describeCoverage(coverage: CoverageResult): string {
  return `${coverage.numerator}/${coverage.denominator} ${coverage.state}${coverage.alert ? " LOW" : ""}`;
}

/** Per metric: results by status, LOW_COVERAGE alerts, and the lowest coverage with its key. */
export function formatMetricTable(rows: readonly MetricRow[], width?: number): string {
  const counts = formatTable(
    ["metric", "results", "published", "below-min", "n/a", "low-cov", "lowest coverage"],
    rows.map((row) => [
      row.metricId,
      String(row.records),
      String(row.published),
      String(row.belowMinimum),
      String(row.notAvailable),
      String(row.coverageAlerts),
      row.lowest === undefined ? "-" : describeCoverage(row.lowest.coverage),
    ]),
    width === undefined ? {} : { width },
  );
  const where = formatTable(
    ["metric", "lowest coverage at (scope, cohort)"],
    rows.map((row) => [
      row.metricId,
      row.lowest === undefined ? "no result has a population" : `${row.lowest.scope}, ${row.lowest.cohort}`,
    ]),
    width === undefined ? {} : { width, wrap: [1] },
  );
  return `${counts}\n\n${where}`;
}
