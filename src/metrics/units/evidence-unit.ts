import { PROVENANCE_BASES } from "../../contract/fact-schema.ts";
import type { Cost, DeliverySummary, ModelCall } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { EngineConfig } from "../engine-config.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";

const READABLE_BASES: ReadonlySet<string> = new Set(PROVENANCE_BASES);
const DIRECT_BASES: ReadonlySet<string> = new Set(["DIRECT_HOST", "DIRECT_PROVIDER"]);

/**
 * direct-evidence-basis-rate: an accepted call, cost or summary in the window of its own
 * event_time. Unreadable provenance (null or an unknown basis) is uncovered, never "nondirect";
 * readable nondirect provenance stays in the denominator and contributes 0.
 */
export function evidenceContributions(fact: ModelCall | Cost | DeliverySummary, config: EngineConfig): ContributionDraft[] {
  const basis = fact.provenance?.basis;
  const readable = basis !== undefined && READABLE_BASES.has(basis);
  return [
    {
      metricId: "direct-evidence-basis-rate",
      scope: windowScopeOf(fact.event_time, config.windowMillis),
      cohort: NO_COHORT,
      candidate: true,
      covered: readable,
      eligible: readable,
      hit: readable && DIRECT_BASES.has(basis),
      asOf: fact.event_time,
    },
  ];
}
