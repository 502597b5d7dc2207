import type { DeliveryOutcome } from "../contract/fact-schema.ts";
import type { DefinedTask, DeliverySummary } from "../contract/facts.ts";
import { terminalSummary } from "./delivery-reading.ts";
import { evidenceBasis } from "./evidence-basis.ts";
import type { MemberReading } from "./task-inputs.ts";

/** Contract §3: each defined task gets at most one reason, the first of this list that applies. */
export const TASK_EXCLUSION_PRECEDENCE = [
  "MISSING_TASK_IDENTITY",
  "UNDEFINED_TASK_MEMBERSHIP",
  "INCOMPLETE_COHORT_COORDINATES",
  "OPEN_DELIVERY",
  "MIXED_DELIVERY_OUTCOMES",
  "REQUIREMENT_CHANGED",
  "INFRASTRUCTURE_FAILURE",
] as const;

export type TaskExclusion = (typeof TASK_EXCLUSION_PRECEDENCE)[number];

export interface TaskReading {
  /** The one exclusion reason, by precedence; undefined for a comparable eligible terminal task. */
  readonly exclusion: TaskExclusion | undefined;
  /** The unique terminal outcome when every member's terminal outcome is the same one. */
  readonly outcome: DeliveryOutcome | undefined;
  /** The declared members, deduplicated, in declaration order. */
  readonly members: readonly string[];
  /** Greatest event_time of the summaries read. */
  readonly asOf: number;
}

/**
 * The role_template a task is sliced by: only an event-time assignment counts, because a
 * backfilled template would apply today's configuration to history (seed §7: never backfill).
 */
export function eventTimeTemplate(task: DefinedTask): string | undefined {
  return task.role_template !== undefined && task.template_assignment === "EVENT_TIME" ? task.role_template : undefined;
}

/**
 * Seed §6.2 at the snapshot's cutoff, from its members' readings at that cutoff (declared order,
 * deduplicated). Members join summaries only by exact Delivery and Task
 * identity (a summary naming another task, or none, does not join), only summaries with
 * event_time ≤ cutoff are read, and only direct evidence is read (seed §5). Absence is never reconstructed and no winner is inferred.
 * `slicesByTemplate` is false for role-model-task-outcome-rate, whose cohort is the attribution
 * tuple: there a missing role_template is not a missing coordinate.
 */
export function readTask(
  task: DefinedTask,
  memberReadings: ReadonlyMap<string, MemberReading>,
  slicesByTemplate: boolean,
): TaskReading {
  const members = [...memberReadings.keys()];
  let asOf = Number.NEGATIVE_INFINITY;
  const reading = (exclusion: TaskExclusion | undefined, outcome?: DeliveryOutcome): TaskReading => ({
    exclusion,
    outcome,
    members,
    asOf,
  });

  if (task.task_id === undefined) return reading("MISSING_TASK_IDENTITY");
  if (members.length === 0) return reading("UNDEFINED_TASK_MEMBERSHIP");
  if (slicesByTemplate && eventTimeTemplate(task) === undefined) return reading("INCOMPLETE_COHORT_COORDINATES");

  const outcomes = new Set<DeliveryOutcome>();
  let open = false;
  let requirementChanged = false;
  for (const member of members) {
    const readable = (memberReadings.get(member) as MemberReading).summaries;
    // The Delivery's own terminal reading (its earliest TERMINAL summary up to the cutoff) decides;
    // later TERMINAL summaries are conflicts and never read. The member joins only when that
    // summary names this task and is direct evidence (contract §3); otherwise it stays open.
    const terminal = terminalSummary(readable);
    const joins = (summary: DeliverySummary): boolean =>
      summary.task_id === task.task_id && evidenceBasis(summary) === "DIRECT";
    if (terminal?.outcome === undefined || !joins(terminal)) open = true;
    else outcomes.add(terminal.outcome);
    // Requirement changes are read from joined, direct summaries only: OPEN ones and the terminal one.
    for (const summary of readable) {
      if (!joins(summary) || (summary.status === "TERMINAL" && summary !== terminal)) continue;
      asOf = Math.max(asOf, summary.event_time);
      if (summary.requirement_changed) requirementChanged = true;
    }
  }
  if (open) return reading("OPEN_DELIVERY");
  if (outcomes.size > 1) return reading("MIXED_DELIVERY_OUTCOMES");
  if (requirementChanged) return reading("REQUIREMENT_CHANGED");
  const [outcome] = outcomes;
  if (outcome === "INFRASTRUCTURE_FAILURE") return reading("INFRASTRUCTURE_FAILURE", outcome);
  return reading(undefined, outcome);
}

/**
 * The same task read for a metric sliced by role_template: the template coordinate takes its place
 * in the precedence (after identity and membership). Derived from the tuple-cohort reading so a
 * task's Deliveries are read once; an excluded coordinate means nothing after it was read.
 */
export function withTemplateCoordinate(reading: TaskReading, task: DefinedTask): TaskReading {
  if (reading.exclusion === "MISSING_TASK_IDENTITY" || reading.exclusion === "UNDEFINED_TASK_MEMBERSHIP")
    return reading;
  if (eventTimeTemplate(task) !== undefined) return reading;
  return {
    exclusion: "INCOMPLETE_COHORT_COORDINATES",
    outcome: undefined,
    members: reading.members,
    asOf: Number.NEGATIVE_INFINITY,
  };
}

/** Reasons that mean a required direct input is missing (the task is not covered), per reading. */
export function lacksIdentityOrMembership(exclusion: TaskExclusion | undefined): boolean {
  return (
    exclusion === "MISSING_TASK_IDENTITY" ||
    exclusion === "UNDEFINED_TASK_MEMBERSHIP" ||
    exclusion === "INCOMPLETE_COHORT_COORDINATES"
  );
}

export function lacksTerminalInputs(exclusion: TaskExclusion | undefined): boolean {
  return lacksIdentityOrMembership(exclusion) || exclusion === "OPEN_DELIVERY";
}
