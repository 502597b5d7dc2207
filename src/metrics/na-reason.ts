import type { MetricId } from "../catalog/metric-definitions.ts";

/** What each metric counts (seed §5 evaluation unit), singular and plural, as an N/A reason names it. */
const UNIT_NOUNS: Readonly<Record<MetricId, readonly [string, string]>> = {
  "role-template-rework-rate": ["task", "tasks"],
  "role-template-trajectory-partial-cost": ["task", "tasks"],
  "role-model-task-outcome-rate": ["task", "tasks"],
  "packet-rework-rate": ["packet", "packets"],
  "operational-latency-ms": ["call", "calls"],
  "trajectory-partial-cost": ["Delivery", "Deliveries"],
  "task-cohort-comparison-eligibility": ["task", "tasks"],
  "delivery-stage-reach": ["Delivery", "Deliveries"],
  "delivery-terminal-outcome-rate": ["Delivery", "Deliveries"],
  "delivery-cycle-time-ms": ["Delivery", "Deliveries"],
  "operational-token-usage": ["call", "calls"],
  "operational-attributable-cost": ["call", "calls"],
  "operational-usage-availability": ["call", "calls"],
  "direct-evidence-basis-rate": ["fact", "facts"],
};

/** Exclusion reasons ending in `_COST` count left-out costs, not units (docs/semantics.md decision 15). */
const COST_REASON_SUFFIX = "_COST";

/** The counts a record publishes beside its na_reason: coverage and eligible_units. */
export interface UnavailableCounts {
  readonly candidates: number;
  readonly covered: number;
  readonly eligible: number;
}

/**
 * Contract revision 3 change 13: a record with no covered or no eligible unit says which, with the
 * counts published beside it (coverage, eligible_units, exclusions), so the reason can never
 * contradict them. It instantiates the catalog's "N/A when no eligible … exists" condition for this
 * scope and cohort; the catalog's text itself stays the metric's definition (docs/semantics.md).
 */
export function unavailableReason(
  metricId: MetricId,
  counts: UnavailableCounts,
  exclusions: Readonly<Record<string, number>>,
): string {
  const [singular, plural] = UNIT_NOUNS[metricId];
  const units = (count: number): string => `${count} candidate ${count === 1 ? singular : plural}`;
  const unitReasons = listed(exclusions, (reason) => !reason.endsWith(COST_REASON_SUFFIX));
  const costReasons = listed(exclusions, (reason) => reason.endsWith(COST_REASON_SUFFIX));
  const parts: string[] = [];
  if (counts.candidates === 0) {
    parts.push(`N/A: no candidate ${plural}`);
    if (unitReasons !== "") parts.push(`outside the base scope: ${unitReasons}`);
  } else {
    const state = counts.covered === 0 ? "none covered" : `${counts.covered} covered, none eligible`;
    parts.push(`N/A: ${units(counts.candidates)}, ${state}`);
    if (unitReasons !== "") parts.push(`excluded: ${unitReasons}`);
  }
  if (costReasons !== "") parts.push(`costs left out: ${costReasons}`);
  return parts.join("; ");
}

/** "20 NONDIRECT_EVIDENCE, 3 REQUIREMENT_CHANGED": the selected reasons with their counts, in the record's order. */
function listed(exclusions: Readonly<Record<string, number>>, select: (reason: string) => boolean): string {
  return Object.entries(exclusions)
    .filter(([reason]) => select(reason))
    .map(([reason, count]) => `${count} ${reason}`)
    .join(", ");
}
