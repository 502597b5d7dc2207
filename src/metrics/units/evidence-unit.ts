import type { Cost, DeliverySummary, ModelCall } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { EngineConfig } from "../engine-config.ts";
import { evidenceBasis } from "../evidence-basis.ts";
import type { FactIndex } from "../fact-index.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";

/**
 * direct-evidence-basis-rate: an accepted operational or Delivery fact (seed §5) in the window of
 * its own event_time. Unreadable provenance (null or an unknown basis) is uncovered, never
 * "nondirect"; readable nondirect provenance stays in the denominator and contributes 0.
 */
export function evidenceContribution(
  fact: ModelCall | Cost | DeliverySummary,
  config: EngineConfig,
): ContributionDraft {
  const basis = evidenceBasis(fact);
  const readable = basis !== "UNREADABLE";
  return {
    metricId: "direct-evidence-basis-rate",
    scope: windowScopeOf(fact.event_time, config.windowMillis),
    cohort: NO_COHORT,
    candidate: true,
    covered: readable,
    eligible: readable,
    hit: basis === "DIRECT",
    asOf: fact.event_time,
  };
}

/**
 * Facts that are units on their own: OPEN delivery summaries and costs linked to a Delivery. They
 * read nothing but themselves, so the engine adds them on acceptance and subtracts them on
 * quarantine. A TERMINAL summary is a unit only while it is its Delivery's earliest (contract
 * revision 3 change 1: a later one is a conflict, a unit of no metric), which depends on the
 * Delivery's other summaries: the Delivery's unit contributes it (deliveryContributions).
 */
export function evidenceContributions(fact: Cost | DeliverySummary, config: EngineConfig): ContributionDraft[] {
  if (fact.type === "cost" && fact.delivery_id === undefined) return [];
  if (fact.type === "delivery_summary" && fact.status === "TERMINAL") return [];
  return [evidenceContribution(fact, config)];
}

/**
 * An operational call and the costs linked to it (contract revision 2 §3: judge calls, with
 * operational = false, and their costs are not units). Whether a cost counts depends on its call,
 * so these are part of the call's unit and recomputed with it.
 */
export function callEvidenceContributions(
  call: ModelCall,
  index: FactIndex,
  config: EngineConfig,
): ContributionDraft[] {
  const drafts = [evidenceContribution(call, config)];
  const costs = index.costsByCall.get(call.call_id);
  for (let position = 0; position < costs.length; position++)
    drafts.push(evidenceContribution(costs[position] as Cost, config));
  return drafts;
}
