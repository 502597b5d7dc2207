import type { CatalogSummary, MetricDefinition } from "../catalog/metric-definitions.ts";
import { formatTimestamp } from "../contract/timestamp.ts";
import { coverageResult } from "./coverage.ts";
import { SUM_PAST_SAFE_INTEGER } from "./exact-sum.ts";
import type { GroupAggregate, MoneySliceTotal } from "./group-aggregate.ts";
import { FORMULA_SHAPES } from "./metric-formula.ts";
import { unavailableReason } from "./na-reason.ts";
import type {
  Cohort,
  CoverageResult,
  Measures,
  MetricResult,
  ResultStatus,
  ResultValue,
} from "../contract/result-record.ts";
import { cohortOf, resultKey } from "./scope.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { InvariantError } from "../errors.ts";

export interface RenderedResult {
  readonly key: string;
  readonly result: MetricResult;
}

/**
 * Turns one group's sums into its published records: one record, or for money metrics one per
 * exact slice (plus, when candidates exist but no eligible money does, one NOT_AVAILABLE record
 * for the cohort). Coverage is computed before and independently of the value and is always
 * published; the value is hidden (null, no measures) when not available or below minimum sample.
 */
export function renderGroup(
  group: GroupAggregate,
  catalog: CatalogSummary,
  thresholdHundredths: number,
): RenderedResult[] {
  const { metricId, scope, cohort } = group.sample;
  const definition = catalog.metrics.get(metricId);
  if (definition === undefined) throw new InvariantError({ problem: `no catalog definition for ${metricId}` });
  const coverage = coverageResult(group.covered, group.candidates, thresholdHundredths);
  const asOfTime = group.asOf();
  const base = {
    catalog: catalog.catalogRevision,
    definition,
    coverage,
    exclusions: sortedRecord(group.exclusions),
    asOf: asOfTime === undefined ? null : formatTimestamp(asOfTime),
  };
  const shape = FORMULA_SHAPES[metricId];
  if (shape !== "money") {
    const exact = shape === "mean-duration" || shape === "sum" ? group.amount.safe !== undefined : true;
    const record = assemble(
      base,
      scope,
      cohort,
      group.eligible,
      (status) => (status === "PUBLISHED" ? valueAndMeasures(shape, group, definition) : undefined),
      exact,
    );
    return [{ key: group.sample.groupKey, result: record }];
  }
  const slices = [...group.money.values()];
  if (slices.length === 0) {
    return [{ key: group.sample.groupKey, result: assemble(base, scope, cohort, 0, () => undefined) }];
  }
  return slices.map((slice) => {
    const sliceCohort = cohortOf({
      ...cohort,
      currency: slice.currency,
      source: slice.source,
      cost_basis: slice.costBasis,
    });
    const result = assemble(
      base,
      scope,
      sliceCohort,
      slice.units,
      (status) => (status === "PUBLISHED" ? moneyValue(slice, definition) : undefined),
      slice.amountMinor.safe !== undefined,
    );
    return { key: resultKey(metricId, scope, sliceCohort), result };
  });
}

interface Shared {
  readonly catalog: string;
  readonly definition: MetricDefinition;
  readonly coverage: CoverageResult;
  readonly exclusions: Record<string, number>;
  readonly asOf: string | null;
}

/**
 * Status precedence (contract revision 3 change 2: NOT_AVAILABLE, for any reason, first): no
 * covered or no eligible unit → NOT_AVAILABLE (missing is never zero); a sum past 2^53 − 1 →
 * NOT_AVAILABLE, since more units cannot make it publishable; fewer eligible units than
 * minimum_sample → BELOW_MINIMUM_SAMPLE; otherwise PUBLISHED.
 */
export function resultStatus(
  coveredUnits: number,
  eligibleUnits: number,
  minimumSample: number,
  exact: boolean,
): ResultStatus {
  if (coveredUnits === 0 || eligibleUnits === 0 || !exact) return "NOT_AVAILABLE";
  if (eligibleUnits < minimumSample) return "BELOW_MINIMUM_SAMPLE";
  return "PUBLISHED";
}

/**
 * `exact` is false when the group's sum is past 2^53 − 1: such a value is NOT_AVAILABLE with the
 * reason said, never rounded or infinite (contract revision 2 §1). Coverage is published as ever.
 */
function assemble(
  shared: Shared,
  scope: MetricResult["scope"],
  cohort: Cohort,
  eligibleUnits: number,
  compute: (status: ResultStatus) => { value: ResultValue; measures: Measures } | undefined,
  exact = true,
): MetricResult {
  const { definition, coverage } = shared;
  const status = resultStatus(coverage.numerator, eligibleUnits, definition.minimumSample, exact);
  const computed = compute(status);
  const counts = { candidates: coverage.denominator, covered: coverage.numerator, eligible: eligibleUnits };
  const missing = coverage.numerator === 0 || eligibleUnits === 0;
  const unavailable = missing
    ? unavailableReason(definition.metricId, counts, shared.exclusions)
    : SUM_PAST_SAFE_INTEGER;
  return {
    catalog: shared.catalog,
    metric_id: definition.metricId,
    metric_version: definition.version,
    scope,
    cohort,
    status,
    value: computed?.value ?? null,
    na_reason: status === "NOT_AVAILABLE" ? unavailable : null,
    measures: computed?.measures ?? null,
    eligible_units: eligibleUnits,
    minimum_sample: definition.minimumSample,
    coverage,
    exclusions: shared.exclusions,
    as_of: shared.asOf,
  };
}

function measures(unit: string, parts: Partial<Omit<Measures, "unit">>): Measures {
  return {
    numerator: parts.numerator ?? null,
    denominator: parts.denominator ?? null,
    categories: parts.categories ?? null,
    sum: parts.sum ?? null,
    contributing: parts.contributing ?? null,
    unit,
    currency: parts.currency ?? null,
  };
}

function valueAndMeasures(
  shape: Exclude<(typeof FORMULA_SHAPES)[keyof typeof FORMULA_SHAPES], "money">,
  group: GroupAggregate,
  definition: MetricDefinition,
): { value: ResultValue; measures: Measures } {
  const eligible = group.eligible;
  switch (shape) {
    case "ratio":
      return {
        value: group.hits / eligible,
        measures: measures(definition.unit, { numerator: group.hits, denominator: eligible }),
      };
    case "per-category": {
      const counts = sortedRecord(group.categories);
      const quotients: Record<string, number> = {};
      for (const [category, count] of Object.entries(counts)) quotients[category] = count / eligible;
      return { value: quotients, measures: measures(definition.unit, { categories: counts, denominator: eligible }) };
    }
    case "mean-duration": {
      // One division of the exact integer total by an exact integer gives the double nearest the true
      // mean: 600 µs over 3 → 0.2 ms, not 0.6 / 3 = 0.19999…, and 196,609 ms over 3 → 65536.33333333333,
      // not the 65536.33333333334 that dividing by the count and then by 1000 rounds to.
      const micros = group.amount.safe as number;
      return {
        value: micros / (eligible * 1000),
        measures: measures(definition.unit, { sum: micros / 1000, contributing: eligible }),
      };
    }
    case "sum": {
      const total = group.amount.safe as number;
      return { value: total, measures: measures(definition.unit, { sum: total, contributing: eligible }) };
    }
  }
}

function moneyValue(slice: MoneySliceTotal, definition: MetricDefinition): { value: ResultValue; measures: Measures } {
  const total = slice.amountMinor.safe as number;
  return {
    value: total,
    measures: measures(definition.unit, { sum: total, contributing: slice.units, currency: slice.currency }),
  };
}

function sortedRecord(counts: ReadonlyMap<string, number>): Record<string, number> {
  const sorted: Record<string, number> = {};
  for (const key of [...counts.keys()].sort(byUtf8)) sorted[key] = counts.get(key) as number;
  return sorted;
}
