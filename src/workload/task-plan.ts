import type { DeliveryOutcome } from "../contract/fact-schema.ts";
import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";
import { HOUR, MINUTE } from "./records.ts";
import { REPOSITORIES, REVIEWER_TUPLES, ROLE_TEMPLATES, WRITER_TUPLES, type Tuple } from "./vocabulary.ts";

/** How a Delivery's summaries were reported. */
export type SummaryMode = "FULL" | "OPEN_ONLY" | "NONE";

export interface DeliveryPlan {
  readonly id: string;
  readonly runId: string;
  /** Short id used to derive the ids of the Delivery's calls, costs and events. */
  readonly tag: string;
  readonly start: number;
  readonly end: number;
  readonly outcome: DeliveryOutcome;
  readonly summaries: SummaryMode;
  readonly requirementChanged: boolean;
  readonly secondTerminal: boolean;
  readonly legacyRunner: boolean;
}

/** One task and how the evaluation owner declares it in the batch's snapshots. */
export interface TaskPlan {
  readonly id: string;
  readonly tag: string;
  readonly template: string;
  readonly assignment: "EVENT_TIME" | "BACKFILLED";
  readonly declaresTaskId: boolean;
  readonly declaresTemplate: boolean;
  readonly members: "LISTED" | "ABSENT" | "EMPTY";
  readonly writer: Tuple;
  readonly reviewer: Tuple;
  readonly repository: string;
  readonly start: number;
  readonly deliveries: readonly DeliveryPlan[];
}

const OTHER_OUTCOMES: Readonly<Record<DeliveryOutcome, readonly DeliveryOutcome[]>> = {
  SUCCEEDED: ["FAILED", "CANCELLED"],
  FAILED: ["SUCCEEDED", "CANCELLED"],
  CANCELLED: ["SUCCEEDED", "FAILED"],
  INFRASTRUCTURE_FAILURE: ["SUCCEEDED", "FAILED"],
};

/**
 * Plans one task of a batch: its cohort coordinates, its member Deliveries and their timing and
 * outcomes. Tasks start in the first 20 hours of the batch; Deliveries run minutes to hours, a few
 * run past every cutoff of the batch.
 */
export function planTask(rng: Rng, batch: number, index: number, batchStart: number): TaskPlan {
  const tag = `${batch}-${index}`;
  const id = `task-${tag}`;
  const start = batchStart + Math.floor(rng.next() * 20 * HOUR);
  const memberCount = rng.weighted(ANOMALY_MIX.taskMembers);
  const outcome = rng.weighted(ANOMALY_MIX.taskOutcome);
  const mixedAt =
    memberCount > 1 && outcome !== "INFRASTRUCTURE_FAILURE" && rng.chance(ANOMALY_MIX.mixedOutcomes)
      ? rng.int(0, memberCount - 1)
      : -1;
  const requirementAt = rng.chance(ANOMALY_MIX.requirementChanged) ? rng.int(0, memberCount - 1) : -1;

  const deliveries: DeliveryPlan[] = [];
  let memberStart = start;
  for (let member = 0; member < memberCount; member += 1) {
    if (member > 0) memberStart += rng.int(5, 90) * MINUTE;
    const longRunning = rng.chance(ANOMALY_MIX.longRunning);
    const duration = longRunning
      ? rng.int(30, 50) * HOUR
      : Math.round(Math.min(8 * HOUR, Math.max(3 * MINUTE, rng.skewed(45 * MINUTE, 2.2))));
    const summaries: SummaryMode = longRunning
      ? "OPEN_ONLY"
      : rng.chance(ANOMALY_MIX.openOnly)
        ? "OPEN_ONLY"
        : rng.chance(ANOMALY_MIX.noSummary)
          ? "NONE"
          : "FULL";
    const memberTag = `${tag}-${member}`;
    deliveries.push({
      id: `dlv-${memberTag}`,
      runId: `run-${memberTag}`,
      tag: memberTag,
      start: memberStart,
      end: memberStart + duration,
      outcome: member === mixedAt ? rng.pick(OTHER_OUTCOMES[outcome]) : outcome,
      summaries,
      requirementChanged: member === requirementAt,
      secondTerminal: rng.chance(ANOMALY_MIX.secondTerminal),
      legacyRunner: rng.chance(ANOMALY_MIX.legacyRunner),
    });
  }

  const declaresTemplate = !rng.chance(ANOMALY_MIX.missingRoleTemplate);
  return {
    id,
    tag,
    template: rng.weighted(ROLE_TEMPLATES),
    assignment: rng.chance(ANOMALY_MIX.backfilledTemplate) ? "BACKFILLED" : "EVENT_TIME",
    declaresTaskId: !rng.chance(ANOMALY_MIX.missingTaskId),
    declaresTemplate,
    members: rng.chance(ANOMALY_MIX.missingMembers)
      ? "ABSENT"
      : rng.chance(ANOMALY_MIX.emptyMembers)
        ? "EMPTY"
        : "LISTED",
    writer: rng.weighted(WRITER_TUPLES),
    reviewer: rng.weighted(REVIEWER_TUPLES),
    repository: rng.pick(REPOSITORIES),
    start,
    deliveries,
  };
}
