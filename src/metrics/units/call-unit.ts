import type { ModelCall } from "../../contract/facts.ts";
import type { MetricId } from "../../catalog/metric-definitions.ts";
import { INCOMPLETE_ATTRIBUTION, attributionCohort, directedCohort } from "../attribution.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";
import { evidenceBasis, NONDIRECT_EVIDENCE } from "../evidence-basis.ts";
import type { Cohort, WindowScope } from "../../contract/result-record.ts";
import { callEvidenceContributions } from "./evidence-unit.ts";
import { excludedFor, millisToMicros } from "./finalize.ts";

/** The window metrics whose unit is an operational model call, sliced by the attribution tuple. */
const CALL_METRICS: readonly MetricId[] = [
  "operational-latency-ms",
  "operational-token-usage",
  "operational-attributable-cost",
  "operational-usage-availability",
];

/**
 * An operational call in its event-time window. A call without a complete tuple enters no slice:
 * it is counted once per metric in the cohort-less record (contract §3, tuple-sliced metrics).
 * Judge/evaluation calls (operational = false) are not units of these metrics at all.
 */
export function callContributions(call: ModelCall, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  if (!call.operational) return [];
  const evidence = callEvidenceContributions(call, index, config);
  const scope = windowScopeOf(call.event_time, config.windowMillis);
  const tuple = attributionCohort(call);
  if (tuple === undefined) {
    return [
      ...evidence,
      ...CALL_METRICS.map((metricId) => ({
        metricId,
        scope,
        cohort: NO_COHORT,
        candidate: true,
        exclusions: excludedFor(INCOMPLETE_ATTRIBUTION),
        asOf: call.event_time,
      })),
    ];
  }
  return [...evidence, ...tupleContributions(call, tuple, scope, index)];
}

function tupleContributions(call: ModelCall, tuple: Cohort, scope: WindowScope, index: FactIndex): ContributionDraft[] {
  const asOf = call.event_time;
  const drafts: ContributionDraft[] = [];
  // Seed §5 "direct accepted host/provider evidence": a nondirect call is a covered candidate
  // excluded as NONDIRECT_EVIDENCE; one with unreadable provenance is uncovered (never assumed).
  const basis = evidenceBasis(call);
  const readable = basis !== "UNREADABLE";
  const direct = basis === "DIRECT";
  const exclusions = excludedFor(basis === "NONDIRECT" ? NONDIRECT_EVIDENCE : undefined);

  const duration = call.span_duration_ms;
  drafts.push({
    metricId: "operational-latency-ms",
    scope,
    cohort: tuple,
    candidate: true,
    covered: readable && duration !== undefined,
    eligible: direct && duration !== undefined,
    amount: direct && duration !== undefined ? millisToMicros(duration) : 0,
    exclusions,
    asOf,
  });

  for (const direction of ["input", "output"] as const) {
    const tokens = direction === "input" ? call.input_tokens : call.output_tokens;
    drafts.push({
      metricId: "operational-token-usage",
      scope,
      cohort: directedCohort(tuple, direction),
      candidate: true,
      covered: readable && tokens !== undefined,
      eligible: direct && tokens !== undefined,
      amount: direct ? (tokens ?? 0) : 0,
      exclusions,
      asOf,
    });
  }

  const money = readMoney(index.costsByCall.get(call.call_id));
  const hasMoney = money.shares.length > 0;
  drafts.push({
    metricId: "operational-attributable-cost",
    scope,
    cohort: tuple,
    candidate: true,
    covered: readable && hasMoney,
    eligible: direct && hasMoney,
    money: direct ? money.shares : [],
    exclusions: { ...money.excluded, ...exclusions },
    asOf: Math.max(asOf, money.asOf),
  });

  // NONE is an explicit classification ("no applicable usage"): covered, in the denominator, not a hit.
  const classified = call.usage_source !== undefined;
  const applicable = call.usage_source === "PROVIDER" || call.usage_source === "HOST";
  drafts.push({
    metricId: "operational-usage-availability",
    scope,
    cohort: tuple,
    candidate: true,
    covered: readable && classified,
    eligible: direct && classified,
    hit: direct && applicable,
    exclusions,
    asOf,
  });
  return drafts;
}
