import type { DefinedTask, TaskSnapshot } from "../../contract/facts.ts";
import { INCOMPLETE_ATTRIBUTION } from "../attribution.ts";
import type { ContributionDraft } from "../contribution.ts";
import { NONDIRECT_EVIDENCE } from "../evidence-basis.ts";
import type { Cohort } from "../../contract/result-record.ts";
import { cohortOf, NO_COHORT, snapshotScopeOf } from "../scope.ts";
import {
  combineCalls,
  combineMoney,
  combineRepairs,
  EMPTY_TASK_ID,
  memberRepairsOf,
  type CallsReading,
  type MemberReading,
  type TaskInputs,
} from "../task-inputs.ts";
import {
  eventTimeTemplate,
  lacksIdentityOrMembership,
  lacksTerminalInputs,
  readTask,
  withTemplateCoordinate,
  type TaskReading,
} from "../task-reading.ts";
import { excludedFor } from "./finalize.ts";

/**
 * A defined task of one snapshot, read at the snapshot's cutoff (seed §6.2). It contributes to the
 * three role-template metrics (cohort: its event-time role_template, or the cohort-less record
 * when it has none) and, once per attribution tuple of its linked operational calls, to
 * role-model-task-outcome-rate. It reads its members and its task_id through `inputs`, at the cutoff.
 */
export function taskContributions(snapshot: TaskSnapshot, task: DefinedTask, inputs: TaskInputs): ContributionDraft[] {
  const scope = snapshotScopeOf(snapshot.snapshot_id, snapshot.cutoff);
  const memberReadings = new Map<string, MemberReading>();
  for (const member of task.members ?? [])
    if (!memberReadings.has(member)) memberReadings.set(member, inputs.member(member, snapshot.cutoff));
  const taskIdReading = task.task_id === undefined ? EMPTY_TASK_ID : inputs.taskId(task.task_id, snapshot.cutoff);
  const tupleReading = readTask(task, memberReadings, false);
  const reading = withTemplateCoordinate(tupleReading, task);
  const template = eventTimeTemplate(task);
  const cohort: Cohort = template === undefined ? NO_COHORT : cohortOf({ role_template: template });
  let asOf = Math.max(snapshot.event_time, reading.asOf);
  const eligible = reading.exclusion === undefined;
  const exclusions = excludedFor(reading.exclusion);
  const drafts: ContributionDraft[] = [];
  const linked = [...memberReadings.values()];

  // Every defined task is in this denominator; the numerator is the comparable eligible terminal
  // ones. One record per snapshot (contract revision 2: seed §6.2 "all tasks in the immutable
  // defined-task snapshot as its denominator"): the role_template is a coordinate to have, not a slice.
  drafts.push({
    metricId: "task-cohort-comparison-eligibility",
    scope,
    cohort: NO_COHORT,
    candidate: true,
    covered: !lacksIdentityOrMembership(reading.exclusion),
    eligible: true,
    hit: eligible,
    exclusions,
    asOf,
  });

  // Repairs joined by task_id or through a member, up to the cutoff, by exact identities
  // (contract revision 3 change 6): one repair edge joins one task.
  const terminalCovered = !lacksTerminalInputs(reading.exclusion);
  const memberRepairs = linked.flatMap((member) => memberRepairsOf(member.repairs, task.task_id));
  const repairs = combineRepairs([taskIdReading.repairs, ...memberRepairs]);
  asOf = Math.max(asOf, repairs.asOf);
  drafts.push({
    metricId: "role-template-rework-rate",
    scope,
    cohort,
    candidate: true,
    covered: terminalCovered,
    eligible,
    hit: eligible && repairs.attributable,
    exclusions,
    asOf,
  });

  const money = combineMoney(linked.map((member) => member.money));
  const hasMoney = money.shares.length > 0;
  drafts.push({
    metricId: "role-template-trajectory-partial-cost",
    scope,
    cohort,
    candidate: true,
    covered: terminalCovered && hasMoney,
    eligible: eligible && hasMoney,
    money: eligible ? money.shares : [],
    exclusions: { ...money.excluded, ...exclusions },
    asOf: Math.max(asOf, money.asOf),
  });

  const calls = combineCalls([taskIdReading.calls, ...linked.map((member) => member.calls)]);
  drafts.push(...outcomeByTupleContributions(snapshot, tupleReading, calls, scope));
  return drafts;
}

/**
 * A snapshot that declares no task still gets its task-cohort-comparison-eligibility record:
 * coverage 0/0 (NO_POPULATION) and the catalog's "N/A when the snapshot declares no task", because
 * coverage is always published. Snapshots with tasks need nothing here: their tasks are the units.
 */
export function emptySnapshotContributions(snapshot: TaskSnapshot): ContributionDraft[] {
  if (snapshot.tasks.length > 0) return [];
  return [
    {
      metricId: "task-cohort-comparison-eligibility",
      scope: snapshotScopeOf(snapshot.snapshot_id, snapshot.cutoff),
      cohort: NO_COHORT,
      candidate: false,
      asOf: snapshot.event_time,
    },
  ];
}

/**
 * role-model-task-outcome-rate: the cohort is the tuple, so the task reading skips the template
 * coordinate. A task is attributed to a tuple only through its linked direct operational calls
 * (contract revision 3 change 3); one that cannot be attributed is counted once in the cohort-less
 * record (change 4: no task disappears), by `unattributed`.
 */
function outcomeByTupleContributions(
  snapshot: TaskSnapshot,
  reading: TaskReading,
  calls: CallsReading,
  scope: ReturnType<typeof snapshotScopeOf>,
): ContributionDraft[] {
  const asOf = Math.max(snapshot.event_time, reading.asOf, calls.asOf);
  // Every member joined and terminal: the task's required direct inputs for this metric.
  const covered = !lacksTerminalInputs(reading.exclusion);
  if (calls.tuples.length === 0) {
    const unit = unattributed(calls, covered);
    if (unit === undefined) return [];
    const exclusions = excludedFor(unit.exclusion);
    const metricId = "role-model-task-outcome-rate";
    return [{ metricId, scope, cohort: NO_COHORT, candidate: true, covered: unit.covered, exclusions, asOf }];
  }
  const eligible = reading.exclusion === undefined;
  return calls.tuples.map((tuple) => ({
    metricId: "role-model-task-outcome-rate" as const,
    scope,
    cohort: tuple,
    candidate: true,
    covered,
    eligible,
    category: eligible ? reading.outcome : undefined,
    exclusions: excludedFor(reading.exclusion),
    asOf,
  }));
}

/**
 * How a task with no direct call of a complete tuple counts in the cohort-less record: direct calls
 * without a complete tuple, or (change 3) calls whose provenance is unreadable, never assumed
 * either way, are INCOMPLETE_ATTRIBUTION and uncovered; calls that are all nondirect are excluded as
 * NONDIRECT_EVIDENCE, covered as the task's terminal reading is; a task with no linked operational
 * call counts (change 4, INCOMPLETE_ATTRIBUTION, uncovered) once every member joined and is terminal,
 * and not at all before.
 */
function unattributed(calls: CallsReading, terminal: boolean): { covered: boolean; exclusion: string } | undefined {
  if (calls.direct > 0 || calls.unreadable > 0) return { covered: false, exclusion: INCOMPLETE_ATTRIBUTION };
  if (calls.nondirect > 0) return { covered: terminal, exclusion: NONDIRECT_EVIDENCE };
  return terminal ? { covered: false, exclusion: INCOMPLETE_ATTRIBUTION } : undefined;
}
