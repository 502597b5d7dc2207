import type { MetricId } from "../catalog/metric-definitions.ts";

/**
 * The result record of observation contract §4, in its JSON form. Objects are built with their keys
 * in a fixed order so that JSON.stringify of a result is byte-stable.
 */
export type WindowScope = { readonly kind: "window"; readonly start: string; readonly end: string };
export type SnapshotScope = { readonly kind: "snapshot"; readonly snapshot_id: string; readonly cutoff: string };
export type Scope = WindowScope | SnapshotScope;

/** Cohort coordinates, keys sorted; `{}` is the cohort-less record. */
export type Cohort = Readonly<Record<string, string>>;

export type CoverageState = "NO_POPULATION" | "NO_COVERAGE" | "PARTIAL" | "FULL";

export interface CoverageResult {
  readonly numerator: number;
  readonly denominator: number;
  readonly raw_ratio: number | null;
  readonly state: CoverageState;
  readonly alert: boolean;
  readonly threshold_hundredths: number;
}

export interface Measures {
  readonly numerator: number | null;
  readonly denominator: number | null;
  readonly categories: Readonly<Record<string, number>> | null;
  readonly sum: number | null;
  readonly contributing: number | null;
  readonly unit: string;
  readonly currency: string | null;
}

export type ResultStatus = "PUBLISHED" | "NOT_AVAILABLE" | "BELOW_MINIMUM_SAMPLE";

export type ResultValue = number | Readonly<Record<string, number>> | null;

export interface MetricResult {
  readonly catalog: string;
  readonly metric_id: MetricId;
  readonly metric_version: string;
  readonly scope: Scope;
  readonly cohort: Cohort;
  readonly status: ResultStatus;
  readonly value: ResultValue;
  readonly na_reason: string | null;
  readonly measures: Measures | null;
  readonly eligible_units: number;
  readonly minimum_sample: number;
  readonly coverage: CoverageResult;
  readonly exclusions: Readonly<Record<string, number>>;
  readonly as_of: string | null;
}

/** An upsert of one result key; `result: null` is a tombstone (the key no longer has any unit). */
export interface ResultChange {
  readonly key: string;
  readonly result: MetricResult | null;
}
