import type { MetricId } from "../catalog/metric-definitions.ts";
import type { Cohort, Scope } from "../contract/result-record.ts";

/** One money amount of a unit in one exact (currency, source, cost_basis) slice; never converted. */
export interface MoneyShare {
  readonly currency: string;
  readonly source: string;
  readonly costBasis: string;
  /** Exact: a bigint only when a unit's costs add up past 2^53 − 1. */
  readonly amountMinor: number | bigint;
}

/**
 * What one unit (a call, a Delivery, a packet, a defined task, a fact) adds to one result group
 * (metric, scope, cohort). Aggregates add a contribution and subtract it again when the unit
 * changes, so a late fact retracts the old contribution and adds the new one: results depend only
 * on the set of accepted facts, never on their order.
 */
export interface Contribution {
  readonly metricId: MetricId;
  readonly scope: Scope;
  readonly cohort: Cohort;
  /** The result key of the group, computed once. */
  readonly groupKey: string;
  /** In the coverage denominator. */
  readonly candidate: boolean;
  /** In the coverage numerator: every required direct input is present and valid. */
  readonly covered: boolean;
  /** Counted in eligible_units (what minimum_sample is compared with). */
  readonly eligible: boolean;
  /** Rate numerator: the unit meets the metric's condition. */
  readonly hit: boolean;
  /** Per-category rates: the unit's one category (outcome, stage), if it counts in a numerator. */
  readonly category: string | undefined;
  /** Durations (integer microseconds) or token counts. */
  readonly amount: number;
  /** Eligible money by exact slice; only for money metrics. */
  readonly money: readonly MoneyShare[];
  /** Exclusion reasons with counts (a unit reason counts 1; left-out costs count per cost). */
  readonly exclusions: Readonly<Record<string, number>>;
  /** Greatest event_time among the facts this contribution read. */
  readonly asOf: number;
}

export type ContributionDraft = Omit<
  Contribution,
  "groupKey" | "covered" | "eligible" | "hit" | "category" | "amount" | "money" | "exclusions"
> &
  Partial<Pick<Contribution, "covered" | "eligible" | "hit" | "category" | "amount" | "money" | "exclusions">>;
