import type { DefinedTask, ModelCall, Repair, TaskSnapshot } from "../../contract/facts.ts";
import { INCOMPLETE_ATTRIBUTION, attributionCohort } from "../attribution.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { FactIndex } from "../fact-index.ts";
import { readMoney } from "../money.ts";
import type { Cohort } from "../result-record.ts";
import { cohortOf, NO_COHORT, snapshotScopeOf } from "../scope.ts";
import { eventTimeTemplate, lacksIdentityOrMembership, lacksTerminalInputs, readTask, withTemplateCoordinate, type TaskReading } from "../task-reading.ts";
import { deliveryCosts } from "./delivery-unit.ts";
import { excludedFor } from "./finalize.ts";

/**
 * A defined task of one snapshot, read at the snapshot's cutoff (seed §6.2). It contributes to the
 * three role-template metrics (cohort: its event-time role_template, or the cohort-less record
 * when it has none) and, once per attribution tuple of its linked operational calls, to
 * role-model-task-outcome-rate.
 */
export function taskContributions(snapshot: TaskSnapshot, task: DefinedTask, index: FactIndex): ContributionDraft[] {
  const scope = snapshotScopeOf(snapshot.snapshot_id, snapshot.cutoff);
  const readable = (eventTime: number): boolean => eventTime <= snapshot.cutoff;
  const tupleReading = readTask(task, snapshot, index, false);
  const reading = withTemplateCoordinate(tupleReading, task);
  const template = eventTimeTemplate(task);
  const cohort: Cohort = template === undefined ? NO_COHORT : cohortOf({ role_template: template });
  let asOf = Math.max(snapshot.event_time, reading.asOf);
  const eligible = reading.exclusion === undefined;
  const exclusions = excludedFor(reading.exclusion);
  const drafts: ContributionDraft[] = [];

  // Every defined task is in this denominator; the numerator is the comparable eligible terminal
  // ones. One record per snapshot (contract revision 2: seed §6.2 "all tasks in the immutable
  // defined-task snapshot as its denominator"): the role_template is a coordinate to have, not a slice.
  drafts.push({ metricId: "task-cohort-comparison-eligibility", scope, cohort: NO_COHORT, candidate: true, covered: !lacksIdentityOrMembership(reading.exclusion), eligible: true, hit: eligible, exclusions, asOf });

  const terminalCovered = !lacksTerminalInputs(reading.exclusion);
  let repaired = false;
  for (const repair of linkedRepairs(task, reading, index)) {
    if (!readable(repair.event_time)) continue;
    asOf = Math.max(asOf, repair.event_time);
    if (repair.attributable) repaired = true;
  }
  drafts.push({ metricId: "role-template-rework-rate", scope, cohort, candidate: true, covered: terminalCovered, eligible, hit: eligible && repaired, exclusions, asOf });

  const memberCosts = reading.members.flatMap((member) => deliveryCosts(member, index, readable).costs);
  const money = readMoney(memberCosts);
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

  drafts.push(...outcomeByTupleContributions(snapshot, task, tupleReading, index, scope, readable));
  return drafts;
}

/**
 * A snapshot that declares no task still gets its task-cohort-comparison-eligibility record:
 * coverage 0/0 (NO_POPULATION) and the catalog's "N/A when the snapshot declares no task", because
 * coverage is always published. Snapshots with tasks need nothing here: their tasks are the units.
 */
export function emptySnapshotContributions(snapshot: TaskSnapshot): ContributionDraft[] {
  if (snapshot.tasks.length > 0) return [];
  return [{ metricId: "task-cohort-comparison-eligibility", scope: snapshotScopeOf(snapshot.snapshot_id, snapshot.cutoff), cohort: NO_COHORT, candidate: false, asOf: snapshot.event_time }];
}

/** A repair linked both by task_id and by a member Delivery is one repair: deduplicated by fact_id. */
function linkedRepairs(task: DefinedTask, reading: TaskReading, index: FactIndex) {
  const repairs = new Map<string, Repair>();
  if (task.task_id !== undefined) for (const repair of index.repairsByTask.get(task.task_id)) repairs.set(repair.fact_id, repair);
  for (const member of reading.members) for (const repair of index.repairsByDelivery.get(member)) repairs.set(repair.fact_id, repair);
  return repairs.values();
}

function linkedOperationalCalls(task: DefinedTask, members: readonly string[], index: FactIndex, readable: (eventTime: number) => boolean): ModelCall[] {
  const calls = new Map<string, ModelCall>();
  if (task.task_id !== undefined) for (const call of index.callsByTask.get(task.task_id)) calls.set(call.fact_id, call);
  for (const member of members) for (const call of index.callsByDelivery.get(member)) calls.set(call.fact_id, call);
  return [...calls.values()].filter((call) => call.operational && readable(call.event_time));
}

/**
 * role-model-task-outcome-rate: the cohort is the tuple, so the task reading skips the template
 * coordinate. A task whose linked operational calls all lack a complete tuple is counted once in
 * the cohort-less record.
 */
function outcomeByTupleContributions(snapshot: TaskSnapshot, task: DefinedTask, reading: TaskReading, index: FactIndex, scope: ReturnType<typeof snapshotScopeOf>, readable: (eventTime: number) => boolean): ContributionDraft[] {
  const calls = linkedOperationalCalls(task, reading.members, index, readable);
  if (calls.length === 0) return [];
  const tuples = new Map<string, Cohort>();
  let asOf = Math.max(snapshot.event_time, reading.asOf);
  for (const call of calls) {
    asOf = Math.max(asOf, call.event_time);
    const tuple = attributionCohort(call);
    if (tuple !== undefined) tuples.set(JSON.stringify(tuple), tuple);
  }
  if (tuples.size === 0) {
    return [{ metricId: "role-model-task-outcome-rate", scope, cohort: NO_COHORT, candidate: true, exclusions: excludedFor(INCOMPLETE_ATTRIBUTION), asOf }];
  }
  const eligible = reading.exclusion === undefined;
  const covered = !(reading.exclusion === "MISSING_TASK_IDENTITY" || reading.exclusion === "UNDEFINED_TASK_MEMBERSHIP" || reading.exclusion === "OPEN_DELIVERY");
  return [...tuples.values()].map((tuple) => ({
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
