import type { DeliverySummary } from "../contract/facts.ts";
import { byUtf8 } from "../contract/code-point-order.ts";

/** Orders summaries by (event_time, fact_id): the contract's tie-break, independent of arrival. */
export function bySummaryTime(a: DeliverySummary, b: DeliverySummary): number {
  if (a.event_time !== b.event_time) return a.event_time - b.event_time;
  return byUtf8(a.fact_id, b.fact_id);
}

/**
 * A Delivery is terminal from its earliest TERMINAL summary by (event_time, fact_id); later
 * TERMINAL summaries are ignored (they never change the outcome, stage or elapsed time read).
 */
export function terminalSummary(summaries: readonly DeliverySummary[]): DeliverySummary | undefined {
  let earliest: DeliverySummary | undefined;
  for (let index = 0; index < summaries.length; index++) {
    const summary = summaries[index] as DeliverySummary;
    if (summary.status !== "TERMINAL") continue;
    if (earliest === undefined || bySummaryTime(summary, earliest) < 0) earliest = summary;
  }
  return earliest;
}

/**
 * A Delivery's TERMINAL summaries, earliest first. More than one is a conflict (contract §2,
 * revision 2 §3: LATER_TERMINAL_SUMMARY), reported with the conflicts, never an exclusion.
 */
export function terminalSummaries(summaries: Iterable<DeliverySummary>): DeliverySummary[] {
  const terminal: DeliverySummary[] = [];
  for (const summary of summaries) if (summary.status === "TERMINAL") terminal.push(summary);
  return terminal.sort(bySummaryTime);
}
