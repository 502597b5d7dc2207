import type { Contribution, ContributionDraft } from "../contribution.ts";
import { groupKeyOf } from "../scope.ts";

const NO_EXCLUSIONS: Readonly<Record<string, number>> = Object.freeze({});

/** Fills a draft's defaults (nothing covered, eligible or hit unless said) and its group key. */
export function finalizeContribution(draft: ContributionDraft): Contribution {
  return {
    metricId: draft.metricId,
    scope: draft.scope,
    cohort: draft.cohort,
    groupKey: groupKeyOf(draft.metricId, draft.scope, draft.cohort),
    candidate: draft.candidate,
    covered: draft.covered ?? false,
    eligible: draft.eligible ?? false,
    hit: draft.hit ?? false,
    category: draft.category,
    amount: draft.amount ?? 0,
    money: draft.money ?? [],
    exclusions: draft.exclusions ?? NO_EXCLUSIONS,
    asOf: draft.asOf,
  };
}

/** A single exclusion reason as a contribution's exclusion map. */
export function excludedFor(reason: string | undefined): Readonly<Record<string, number>> {
  return reason === undefined ? NO_EXCLUSIONS : { [reason]: 1 };
}

/** Span durations are finite milliseconds; summing them as integer microseconds keeps sums exact. */
export function millisToMicros(millis: number): number {
  return Math.round(millis * 1000);
}
