import type { Cost, DeliverySummary } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import { terminalSummary } from "../delivery-reading.ts";
import { evidenceBasis, NONDIRECT_EVIDENCE } from "../evidence-basis.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";
import { evidenceContribution } from "./evidence-unit.ts";
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
 * are reported as conflicts (MetricEngine.conflicts) and are units of no metric (revision 3 change
 * 1), so the earliest one's direct-evidence unit is contributed here. A terminal summary with
 * nondirect provenance keeps the Delivery a covered candidate, excluded as NONDIRECT_EVIDENCE; with
 * unreadable provenance the Delivery is uncovered (seed §5 "direct accepted host/provider
 * evidence"). A requirement change is a common exclusion (revision 3 change 7): the Delivery stays
 * a covered candidate, excluded as REQUIREMENT_CHANGED; an infrastructure failure stays an outcome.
 */
export function deliveryContributions(deliveryId: string, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  const summaries = index.summariesByDelivery.get(deliveryId);
  const terminal = terminalSummary(summaries);
  if (terminal === undefined) return [];
  const scope = windowScopeOf(terminal.event_time, config.windowMillis);
  const basis = evidenceBasis(terminal);
  const readable = basis !== "UNREADABLE";
  const requirement = readRequirement(summaries, terminal);
  const changed = requirement.changed ? "REQUIREMENT_CHANGED" : undefined;
  const exclusion = basis === "NONDIRECT" ? NONDIRECT_EVIDENCE : changed;
  // Direct and not excluded: the Delivery counts in values.
  const included = basis === "DIRECT" && exclusion === undefined;
  const exclusions = excludedFor(exclusion);
  const asOf = Math.max(terminal.event_time, requirement.asOf);
  const drafts: ContributionDraft[] = [evidenceContribution(terminal, config)];

  const linked = deliveryCosts(deliveryId, index);
  const money = readMoney(linked.costs);
  const hasMoney = money.shares.length > 0;
  drafts.push({
    metricId: "trajectory-partial-cost",
    scope,
    cohort: NO_COHORT,
    candidate: true,
    covered: readable && hasMoney,
    eligible: included && hasMoney,
    money: included ? money.shares : [],
    exclusions: { ...money.excluded, ...exclusions },
    asOf: Math.max(asOf, money.asOf, linked.asOf),
  });

  // Seed §5: "Deliveries with direct C56 / linked terminal Deliveries": a Delivery without C56 stays
  // in the denominator (eligible) but is uncovered and in no stage's numerator.
  const stage = included ? terminal.stage_reached : undefined;
  const common = { scope, cohort: NO_COHORT, candidate: true, exclusions, asOf };
  const reached = terminal.stage_reached !== undefined;
  drafts.push({
    ...common,
    metricId: "delivery-stage-reach",
    covered: readable && reached,
    eligible: included,
    category: stage,
  });
  const outcome = terminal.outcome;
  drafts.push({
    ...common,
    metricId: "delivery-terminal-outcome-rate",
    covered: readable && outcome !== undefined,
    eligible: included && outcome !== undefined,
    category: included ? outcome : undefined,
  });
  const elapsed = terminal.elapsed_ms;
  drafts.push({
    ...common,
    metricId: "delivery-cycle-time-ms",
    covered: readable && elapsed !== undefined,
    eligible: included && elapsed !== undefined,
    amount: included && elapsed !== undefined ? millisToMicros(elapsed) : 0,
  });
  return drafts;
}

/**
 * Whether a direct summary the Delivery's reading reads (an OPEN one, or the deciding TERMINAL one)
 * says requirement_changed, and the greatest time of those it read: the flag as task readings read
 * it, without the task join (a Delivery unit belongs to no task). Later TERMINAL summaries are
 * conflicts and never read.
 */
function readRequirement(
  summaries: readonly DeliverySummary[],
  terminal: DeliverySummary,
): { changed: boolean; asOf: number } {
  let changed = false;
  let asOf = Number.NEGATIVE_INFINITY;
  for (let position = 0; position < summaries.length; position++) {
    const summary = summaries[position] as DeliverySummary;
    const later = summary.status === "TERMINAL" && summary !== terminal;
    if (later || evidenceBasis(summary) !== "DIRECT") continue;
    if (summary.event_time > asOf) asOf = summary.event_time;
    if (summary.requirement_changed) changed = true;
  }
  return { changed, asOf };
}
