import type { Cost, DeliverySummary } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import { firstSummary, laterTerminalSummaries, terminalSummary } from "../delivery-reading.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";
import { millisToMicros } from "./finalize.ts";

/**
 * Costs of a Delivery: linked directly by delivery_id, or through a call whose delivery_id it is.
 * `readable` filters by event time (snapshot cutoffs); window scopes read every linked fact.
 */
export function deliveryCosts(deliveryId: string, index: FactIndex, readable: (eventTime: number) => boolean = () => true): { costs: Cost[]; asOf: number } {
  const costs: Cost[] = [];
  let asOf = Number.NEGATIVE_INFINITY;
  for (const cost of index.costsByDelivery.get(deliveryId)) if (readable(cost.event_time)) costs.push(cost);
  for (const call of index.callsByDelivery.get(deliveryId)) {
    if (!readable(call.event_time)) continue;
    for (const cost of index.costsByCall.get(call.call_id)) {
      if (!readable(cost.event_time)) continue;
      costs.push(cost);
      asOf = Math.max(asOf, call.event_time);
    }
  }
  return { costs, asOf };
}

/**
 * A Delivery's window units. trajectory-partial-cost anchors at its first summary and counts open
 * Deliveries too (a partial cost); the three terminal metrics anchor at the earliest TERMINAL
 * summary and read only that summary. Later TERMINAL summaries are counted, never read.
 * Delivery-level metrics count every terminal Delivery whatever its outcome or requirement flag.
 */
export function deliveryContributions(deliveryId: string, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  const summaries: DeliverySummary[] = [...index.summariesByDelivery.get(deliveryId)];
  const first = firstSummary(summaries);
  if (first === undefined) return [];
  const drafts: ContributionDraft[] = [];

  const linked = deliveryCosts(deliveryId, index);
  const money = readMoney(linked.costs);
  const hasMoney = money.shares.length > 0;
  drafts.push({
    metricId: "trajectory-partial-cost",
    scope: windowScopeOf(first.event_time, config.windowMillis),
    cohort: NO_COHORT,
    candidate: true,
    covered: hasMoney,
    eligible: hasMoney,
    money: money.shares,
    exclusions: money.excluded,
    asOf: Math.max(first.event_time, money.asOf, linked.asOf),
  });

  const terminal = terminalSummary(summaries);
  if (terminal === undefined) return drafts;
  const scope = windowScopeOf(terminal.event_time, config.windowMillis);
  const ignored = laterTerminalSummaries(summaries);
  const exclusions: Record<string, number> = ignored > 0 ? { LATER_TERMINAL_SUMMARY: ignored } : {};
  const asOf = terminal.event_time;
  // Seed §5: "Deliveries with direct C56 / linked terminal Deliveries": a Delivery without C56 stays
  // in the denominator (eligible) but is uncovered and in no stage's numerator.
  drafts.push({ metricId: "delivery-stage-reach", scope, cohort: NO_COHORT, candidate: true, covered: terminal.stage_reached !== undefined, eligible: true, category: terminal.stage_reached, exclusions, asOf });
  drafts.push({ metricId: "delivery-terminal-outcome-rate", scope, cohort: NO_COHORT, candidate: true, covered: terminal.outcome !== undefined, eligible: terminal.outcome !== undefined, category: terminal.outcome, exclusions, asOf });
  const elapsed = terminal.elapsed_ms;
  drafts.push({ metricId: "delivery-cycle-time-ms", scope, cohort: NO_COHORT, candidate: true, covered: elapsed !== undefined, eligible: elapsed !== undefined, amount: elapsed === undefined ? 0 : millisToMicros(elapsed), exclusions, asOf });
  return drafts;
}
