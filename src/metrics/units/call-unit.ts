import type { ModelCall } from "../../contract/facts.ts";
import type { MetricId } from "../../catalog/metric-definitions.ts";
import { INCOMPLETE_ATTRIBUTION, attributionCohort, directedCohort } from "../attribution.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";
import { excludedFor, millisToMicros } from "./finalize.ts";

/** The window metrics whose unit is an operational model call, sliced by the attribution tuple. */
const CALL_METRICS: readonly MetricId[] = ["operational-latency-ms", "operational-token-usage", "operational-attributable-cost", "operational-usage-availability"];

/**
 * An operational call in its event-time window. A call without a complete tuple enters no slice:
 * it is counted once per metric in the cohort-less record (contract §3, tuple-sliced metrics).
 * Judge/evaluation calls (operational = false) are not units of these metrics at all.
 */
export function callContributions(call: ModelCall, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  if (!call.operational) return [];
  const scope = windowScopeOf(call.event_time, config.windowMillis);
  const tuple = attributionCohort(call);
  if (tuple === undefined) {
    return CALL_METRICS.map((metricId) => ({ metricId, scope, cohort: NO_COHORT, candidate: true, exclusions: excludedFor(INCOMPLETE_ATTRIBUTION), asOf: call.event_time }));
  }
  const asOf = call.event_time;
  const drafts: ContributionDraft[] = [];

  const duration = call.span_duration_ms;
  drafts.push({ metricId: "operational-latency-ms", scope, cohort: tuple, candidate: true, covered: duration !== undefined, eligible: duration !== undefined, amount: duration === undefined ? 0 : millisToMicros(duration), asOf });

  for (const direction of ["input", "output"] as const) {
    const tokens = direction === "input" ? call.input_tokens : call.output_tokens;
    drafts.push({ metricId: "operational-token-usage", scope, cohort: directedCohort(tuple, direction), candidate: true, covered: tokens !== undefined, eligible: tokens !== undefined, amount: tokens ?? 0, asOf });
  }

  const money = readMoney(index.costsByCall.get(call.call_id));
  const hasMoney = money.shares.length > 0;
  drafts.push({ metricId: "operational-attributable-cost", scope, cohort: tuple, candidate: true, covered: hasMoney, eligible: hasMoney, money: money.shares, exclusions: money.excluded, asOf: Math.max(asOf, money.asOf) });

  // NONE is an explicit classification ("no applicable usage"): covered, in the denominator, not a hit.
  const classified = call.usage_source !== undefined;
  const direct = call.usage_source === "PROVIDER" || call.usage_source === "HOST";
  drafts.push({ metricId: "operational-usage-availability", scope, cohort: tuple, candidate: true, covered: classified, eligible: classified, hit: direct, asOf });
  return drafts;
}
