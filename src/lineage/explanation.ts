import type { MetricId } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { Cohort, MetricResult, Scope } from "../contract/result-record.ts";
import type { UnitKind } from "../metrics/unit-key.ts";

/**
 * A unit's standing in one figure: outside the coverage denominator (`not-candidate`), a candidate
 * missing a required input (`uncovered`), covered and counted (`eligible`), or covered and left out
 * (`excluded`, with its reasons).
 */
export type UnitStatus = "eligible" | "excluded" | "uncovered" | "not-candidate";

export const UNIT_STATUSES: readonly UnitStatus[] = ["eligible", "excluded", "uncovered", "not-candidate"];

/** Where a fact was read: a file's line, or a topic's partition and offset. */
export type ExplainedOrigin =
  { readonly line: number } | { readonly topic: string; readonly partition: number; readonly offset: string };

export interface ExplainedFact {
  readonly fact_id: string;
  readonly type: MetricFact["type"];
  /** provenance.basis as given (null: no provenance). */
  readonly basis: string | null;
  readonly event_time: number;
  readonly origin: ExplainedOrigin | null;
}

/**
 * One contribution of one unit to the figure's group. The unit is an entity of the engine's state
 * (`call`, `delivery`, `packet`, `task`, `snapshot`), or `evidence` for a Delivery's OPEN summary or
 * cost, which reads only itself and so is kept as a fact, not as a unit (UnitState.applyEvidence).
 */
export interface ExplainedUnit {
  readonly kind: UnitKind | "evidence";
  /** The entity's id (a task: snapshot id and position, joined by "#"); evidence: the fact_id. */
  readonly id: string;
  readonly status: UnitStatus;
  /** Exclusion reasons with counts, as the contribution carries them. */
  readonly reasons: Readonly<Record<string, number>>;
  /** For an uncovered unit: the required inputs it lacks. */
  readonly missing: readonly string[];
  readonly contribution: {
    readonly candidate: boolean;
    readonly covered: boolean;
    readonly eligible: boolean;
    readonly hit: boolean;
    readonly category: string | null;
    readonly amount: number;
    readonly money: readonly {
      readonly currency: string;
      readonly source: string;
      readonly cost_basis: string;
      readonly amount_minor: number | string;
    }[];
  };
  /** The facts it read, by event time then fact_id (a task: its linked facts at the cutoff). */
  readonly facts: readonly ExplainedFact[];
}

/** The sums of the explained units, in the published record's terms (money: per exact slice). */
export interface UnitTotals {
  readonly candidates: number;
  readonly covered: number;
  readonly eligible: number;
  readonly hits: number;
  /** Durations in µs or tokens, as a decimal string (exact past 2^53 − 1). */
  readonly amount: string;
  readonly categories: Readonly<Record<string, number>>;
  readonly exclusions: Readonly<Record<string, number>>;
  readonly money: readonly {
    readonly currency: string;
    readonly source: string;
    readonly cost_basis: string;
    readonly units: number;
    readonly amount_minor: string;
  }[];
}

/** A refused or quarantined record that may have counted in this figure. */
export interface ExplainedDeadLetter {
  readonly reason: string;
  readonly detail: string;
  readonly fact_id: string | null;
  readonly type: string | null;
  readonly origin: ExplainedOrigin | null;
}

export interface Explanation {
  /** The group's result key (for money: without the slice's coordinates). */
  readonly key: string;
  readonly metric_id: MetricId;
  readonly scope: Scope;
  readonly cohort: Cohort;
  /** The figures as published under the group (money: one per slice). */
  readonly results: readonly { readonly key: string; readonly result: MetricResult }[];
  readonly totals: UnitTotals;
  readonly units: readonly ExplainedUnit[];
  readonly dead_letters: readonly ExplainedDeadLetter[];
}

/** A dead letter of a replay or a topic, in the terms the explanation filters on. */
export interface DeadLetterInput {
  readonly reason: string;
  readonly detail: string;
  readonly fact_id: string | null;
  /** The record's fields as far as they were read (type, event_time, cohort coordinates). */
  readonly record: Readonly<Record<string, unknown>> | null;
  readonly origin: ExplainedOrigin | null;
}
