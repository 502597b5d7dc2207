import type { Cost } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import { terminalSummary } from "../delivery-reading.ts";
import { evidenceBasis, NONDIRECT_EVIDENCE } from "../evidence-basis.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";
import { excludedFor, millisToMicros } from "./finalize.ts";

/**
 * Costs of a Delivery: linked directly by delivery_id, or through a call whose delivery_id it is
 * (read from the Delivery's document and its calls' documents), and the greatest time of the
 * calls that brought costs.
 */
export function deliveryCosts(deliveryId: string, index: FactIndex): { costs: Cost[]; asOf: number } {
  const costs: Cost[] = [...index.costsByDelivery.get(deliveryId)];
  let asOf = Number.NEGATIVE_INFINITY;
  const calls = index.deliveryCallIds(deliveryId);
  for (let position = 0; position < calls.length; position++) {
    const callId = calls[position] as string;
    const call = index.calls.get(callId);
    if (call === undefined) continue;
    const callCosts = index.costsByCall.get(callId);
    for (let cost = 0; cost < callCosts.length; cost++) costs.push(callCosts[cost] as Cost);
    if (callCosts.length > 0) asOf = Math.max(asOf, call.event_time);
  }
  return { costs, asOf };
}

/**
 * A Delivery's window units, all anchored at its earliest TERMINAL summary (contract §3): an open
 * Delivery is no unit of any Delivery metric, trajectory-partial-cost included (revision 2: seed §5
 * common exclusion "open/non-terminal Deliveries"). Later TERMINAL summaries are never read; they
 * are reported as conflicts (MetricEngine.conflicts). Delivery-level metrics count every terminal
 * Delivery whatever its outcome or requirement flag. A terminal summary with nondirect provenance
 * keeps the Delivery a covered candidate, excluded as NONDIRECT_EVIDENCE; with unreadable
 * provenance the Delivery is uncovered (seed §5 "direct accepted host/provider evidence").
 */
export function deliveryContributions(deliveryId: string, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  const terminal = terminalSummary(index.summariesByDelivery.get(deliveryId));
  if (terminal === undefined) return [];
  const scope = windowScopeOf(terminal.event_time, config.windowMillis);
  const basis = evidenceBasis(terminal);
  const readable = basis !== "UNREADABLE";
  const direct = basis === "DIRECT";
  const exclusions = excludedFor(basis === "NONDIRECT" ? NONDIRECT_EVIDENCE : undefined);
  const asOf = terminal.event_time;
  const drafts: ContributionDraft[] = [];

  const linked = deliveryCosts(deliveryId, index);
  const money = readMoney(linked.costs);
  const hasMoney = money.shares.length > 0;
  drafts.push({
    metricId: "trajectory-partial-cost",
    scope,
    cohort: NO_COHORT,
    candidate: true,
    covered: readable && hasMoney,
    eligible: direct && hasMoney,
    money: direct ? money.shares : [],
    exclusions: { ...money.excluded, ...exclusions },
    asOf: Math.max(asOf, money.asOf, linked.asOf),
  });

  // Seed §5: "Deliveries with direct C56 / linked terminal Deliveries": a Delivery without C56 stays
  // in the denominator (eligible) but is uncovered and in no stage's numerator.
  const stage = direct ? terminal.stage_reached : undefined;
  drafts.push({ metricId: "delivery-stage-reach", scope, cohort: NO_COHORT, candidate: true, covered: readable && terminal.stage_reached !== undefined, eligible: direct, category: stage, exclusions, asOf });
  drafts.push({ metricId: "delivery-terminal-outcome-rate", scope, cohort: NO_COHORT, candidate: true, covered: readable && terminal.outcome !== undefined, eligible: direct && terminal.outcome !== undefined, category: direct ? terminal.outcome : undefined, exclusions, asOf });
  const elapsed = terminal.elapsed_ms;
  drafts.push({ metricId: "delivery-cycle-time-ms", scope, cohort: NO_COHORT, candidate: true, covered: readable && elapsed !== undefined, eligible: direct && elapsed !== undefined, amount: direct && elapsed !== undefined ? millisToMicros(elapsed) : 0, exclusions, asOf });
  return drafts;
}
