import type { MetricId } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { Cohort, Scope } from "../contract/result-record.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { DeadLetterInput, ExplainedDeadLetter, Explanation } from "./explanation.ts";
import { originOf } from "./unit-facts.ts";

/** The fact types a metric's units read: a refused fact of another type cannot have changed its figure. */
const INPUT_TYPES: Readonly<Record<MetricId, readonly MetricFact["type"][]>> = {
  "role-template-rework-rate": ["task_snapshot", "delivery_summary", "repair", "model_call"],
  "role-template-trajectory-partial-cost": ["task_snapshot", "delivery_summary", "cost", "model_call"],
  "role-model-task-outcome-rate": ["task_snapshot", "delivery_summary", "model_call"],
  "task-cohort-comparison-eligibility": ["task_snapshot", "delivery_summary"],
  "packet-rework-rate": ["packet", "repair"],
  "operational-latency-ms": ["model_call"],
  "operational-token-usage": ["model_call"],
  "operational-attributable-cost": ["model_call", "cost"],
  "operational-usage-availability": ["model_call"],
  "trajectory-partial-cost": ["delivery_summary", "cost", "model_call"],
  "delivery-stage-reach": ["delivery_summary"],
  "delivery-terminal-outcome-rate": ["delivery_summary"],
  "delivery-cycle-time-ms": ["delivery_summary"],
  "direct-evidence-basis-rate": ["model_call", "cost", "delivery_summary"],
};

/**
 * Adds the refused records (a replay's dead letters, which the engine's state does not hold) that
 * may have changed the figure: see `relevant`.
 */
export function withRefusedRecords(explanation: Explanation, letters: readonly DeadLetterInput[]): Explanation {
  const refused: ExplainedDeadLetter[] = [];
  for (const letter of letters) {
    if (letter.record === null || !relevant(explanation, letter.record)) continue;
    refused.push({
      reason: letter.reason,
      detail: letter.detail,
      fact_id: letter.fact_id,
      type: typeof letter.record.type === "string" ? letter.record.type : null,
      origin: letter.origin,
    });
  }
  return { ...explanation, dead_letters: [...explanation.dead_letters, ...refused] };
}

/**
 * The quarantined versions (and later TERMINAL summaries) in the ledger that may have changed this
 * figure: see `relevant`.
 */
export function quarantinedVersions(
  lineage: EngineLineage,
  group: { cohort: Cohort; metric_id: MetricId; scope: Scope },
): ExplainedDeadLetter[] {
  const letters = new Map<string, ExplainedDeadLetter>();
  for (const conflict of lineage.conflicts()) {
    for (const factId of new Set(conflict.factIds)) {
      for (const stored of lineage.versions(factId)) {
        if (!relevant(group, stored.fact as unknown as Readonly<Record<string, unknown>>)) continue;
        const letter = {
          reason: conflict.reason,
          detail: `identity ${conflict.identity.replace("\u0000", " ")} carried by ${conflict.factIds.join(", ")}`,
          fact_id: stored.fact.fact_id,
          type: stored.fact.type,
          origin: originOf(stored.origin),
        };
        letters.set(JSON.stringify(letter), letter);
      }
    }
  }
  return [...letters.values()];
}

/**
 * Whether a refused or quarantined record may have changed a figure: of a type the metric reads,
 * with its event time in the window (a snapshot: the snapshot itself, or at most its cutoff), and
 * no attribution coordinate contradicting the cohort. A record refused before its fields were read
 * cannot be placed and is left out.
 */
function relevant(
  group: { cohort: Cohort; metric_id: MetricId; scope: Scope },
  record: Readonly<Record<string, unknown>>,
): boolean {
  if (!(INPUT_TYPES[group.metric_id] as readonly unknown[]).includes(record.type)) return false;
  const time =
    typeof record.event_time === "number"
      ? record.event_time
      : typeof record.event_time === "string"
        ? Date.parse(record.event_time)
        : Number.NaN;
  const { scope } = group;
  if (scope.kind === "window") {
    if (!(time >= Date.parse(scope.start) && time < Date.parse(scope.end))) return false;
  } else if (
    record.type === "task_snapshot" ? record.snapshot_id !== scope.snapshot_id : !(time <= Date.parse(scope.cutoff))
  ) {
    return false;
  }
  for (const [name, value] of Object.entries(group.cohort)) {
    const given = record[name];
    if (typeof given === "string" && given !== value) return false;
  }
  return true;
}
