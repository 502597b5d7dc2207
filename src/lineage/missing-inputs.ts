import type { MetricFact } from "../contract/facts.ts";
import type { Contribution } from "../metrics/contribution.ts";
import { evidenceBasis } from "../metrics/evidence-basis.ts";
import type { UnitKind } from "../metrics/unit-key.ts";

/** What each exclusion that leaves a task uncovered says is missing (task-reading.ts). */
const TASK_GAPS: Readonly<Record<string, string>> = {
  MISSING_TASK_IDENTITY: "task_id",
  UNDEFINED_TASK_MEMBERSHIP: "members (a non-empty, unambiguous membership)",
  INCOMPLETE_COHORT_COORDINATES: "role_template assigned at EVENT_TIME",
  OPEN_DELIVERY: "a direct TERMINAL summary, at most the cutoff, for every member",
  INCOMPLETE_ATTRIBUTION: "a linked direct operational call with a complete tuple (provider, model, role, runtime)",
};

const PROVENANCE = "provenance with a readable basis";
const LINKED_COST = "a linked eligible cost";

/**
 * The required direct inputs an uncovered unit lacks, named as the contract names them (the
 * per-metric table of docs/semantics.md). It names why a unit is outside the coverage numerator,
 * read from the unit's anchoring fact and its exclusion reasons; the unit's contribution itself is
 * the stored one.
 */
export function missingInputs(
  contribution: Contribution,
  kind: UnitKind | "evidence",
  anchor: MetricFact | undefined,
): string[] {
  const reasons = Object.keys(contribution.exclusions);
  if (kind === "task") {
    const gaps = reasons.map((reason) => TASK_GAPS[reason]).filter((gap) => gap !== undefined);
    if (gaps.length > 0) return gaps;
    return contribution.metricId === "role-template-trajectory-partial-cost"
      ? [LINKED_COST]
      : ["the task's terminal reading"];
  }
  if (anchor === undefined) return [];
  if (reasons.includes("INCOMPLETE_ATTRIBUTION"))
    return ["a complete attribution tuple (provider, model, role, runtime)"];
  if (anchor.type !== "task_snapshot" && evidenceBasis(anchor) === "UNREADABLE") return [PROVENANCE];
  switch (contribution.metricId) {
    case "operational-latency-ms":
      return ["span_duration_ms"];
    case "operational-token-usage":
      return [contribution.cohort.direction === "output" ? "output_tokens" : "input_tokens"];
    case "operational-usage-availability":
      return ["usage_source"];
    case "operational-attributable-cost":
    case "trajectory-partial-cost":
      return [LINKED_COST];
    case "delivery-stage-reach":
      return ["stage_reached"];
    case "delivery-terminal-outcome-rate":
      return ["outcome"];
    case "delivery-cycle-time-ms":
      return ["elapsed_ms"];
    case "packet-rework-rate":
      return ["repair_attribution AVAILABLE"];
    default:
      return [];
  }
}
