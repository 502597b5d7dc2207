import type { DeliverySummary, ModelCall, Repair } from "../contract/facts.ts";
import { attributionCohort } from "./attribution.ts";
import { evidenceBasis } from "./evidence-basis.ts";
import type { MoneyShare } from "./contribution.ts";
import { addExact } from "./exact-sum.ts";
import type { FactIndex } from "./fact-index.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { moneySliceKey, readMoney, type MoneyReading } from "./money.ts";
import type { Cohort } from "../contract/result-record.ts";
import { cohortKey } from "./scope.ts";

/**
 * What a defined task reads through one foreign key, at its snapshot's cutoff (seed §6.2; every
 * fact after the cutoff is unread). A task unit reads one `MemberReading` per member Delivery and
 * one `TaskIdReading` for its task_id, and combines them (`combine…`): the single engine computes
 * the readings from its index, and the partitioned engine's entity stage computes each on the
 * partition that owns the Delivery or task_id and sends it to the task unit's partition as a
 * foreign-key join response. The readings are small (a Delivery's few summaries, sums, a set of
 * tuples) whatever the number of calls and costs behind them.
 */
export interface MemberReading {
  /** The member's summaries up to the cutoff (the task decides which join it: its task_id). */
  readonly summaries: readonly DeliverySummary[];
  /** Its costs up to the cutoff, direct or through its calls up to the cutoff. */
  readonly money: MoneyReading;
  readonly calls: CallsReading;
  readonly repairs: MemberRepairsReading;
}

export interface TaskIdReading {
  readonly calls: CallsReading;
  /** The repairs naming the task_id and no Delivery (one naming both is read with its Delivery). */
  readonly repairs: RepairsReading;
}

/**
 * Operational calls up to the cutoff, by evidence basis (contract revision 3 change 3: a task is
 * attributed to a tuple only through direct calls), their greatest time and the distinct complete
 * tuples of the direct ones.
 */
export interface CallsReading {
  readonly direct: number;
  readonly nondirect: number;
  readonly unreadable: number;
  readonly asOf: number;
  /** Sorted by canonical JSON. */
  readonly tuples: readonly Cohort[];
}

/** Repairs up to the cutoff: their greatest time and whether any is attributable. */
export interface RepairsReading {
  readonly count: number;
  readonly asOf: number;
  readonly attributable: boolean;
}

/** The repairs of a member Delivery that name one task_id. */
export interface NamedRepairs extends RepairsReading {
  readonly taskId: string;
}

/**
 * A member Delivery's repairs up to the cutoff, split by the task they name (contract revision 3
 * change 6: a repair naming both task_id and delivery_id joins only the task of that id listing
 * that Delivery). Those naming no task_id join every task listing the Delivery.
 */
export interface MemberRepairsReading {
  readonly unnamed: RepairsReading;
  /** Sorted by task_id (code points). */
  readonly named: readonly NamedRepairs[];
}

export interface TaskInputs {
  member(deliveryId: string, cutoff: number): MemberReading;
  taskId(taskId: string, cutoff: number): TaskIdReading;
}

const NO_CALLS: CallsReading = { direct: 0, nondirect: 0, unreadable: 0, asOf: Number.NEGATIVE_INFINITY, tuples: [] };
const NO_REPAIRS: RepairsReading = { count: 0, asOf: Number.NEGATIVE_INFINITY, attributable: false };
const NO_MEMBER_REPAIRS: MemberRepairsReading = { unnamed: NO_REPAIRS, named: [] };
export const EMPTY_MEMBER: MemberReading = {
  summaries: [],
  money: readMoney([]),
  calls: NO_CALLS,
  repairs: NO_MEMBER_REPAIRS,
};
export const EMPTY_TASK_ID: TaskIdReading = { calls: NO_CALLS, repairs: NO_REPAIRS };

/**
 * The readings from an index that holds every fact linked to the Delivery or task_id. Written for
 * speed (a task unit reads every member again whenever one changes): one pass over a Delivery's
 * calls gives both the costs linked through them and the calls' reading.
 */
export function indexTaskInputs(index: FactIndex): TaskInputs {
  return {
    member(deliveryId, cutoff) {
      if (index.deliveryDocs.get(deliveryId) === undefined) return EMPTY_MEMBER;
      const summaries = upTo(index.summariesByDelivery.get(deliveryId), cutoff, []);
      if (summaries.length > 1) summaries.sort((a, b) => byUtf8(a.fact_id, b.fact_id));
      const costs = upTo(index.costsByDelivery.get(deliveryId), cutoff, []);
      const calls = new CallsTally();
      const callIds = index.deliveryCallIds(deliveryId);
      for (let position = 0; position < callIds.length; position++) {
        const callId = callIds[position] as string;
        const call = index.calls.get(callId);
        if (call === undefined || call.event_time > cutoff) continue;
        upTo(index.costsByCall.get(callId), cutoff, costs);
        calls.add(call);
      }
      const repairs = readMemberRepairs(index.repairsByDelivery.get(deliveryId), cutoff);
      return { summaries, money: readMoney(costs), calls: calls.reading(), repairs };
    },
    taskId(taskId, cutoff) {
      if (index.taskIdDocs.get(taskId) === undefined) return EMPTY_TASK_ID;
      const calls = new CallsTally();
      const callIds = index.taskIdCallIds(taskId);
      for (let position = 0; position < callIds.length; position++) {
        const call = index.calls.get(callIds[position] as string);
        if (call !== undefined && call.event_time <= cutoff) calls.add(call);
      }
      return { calls: calls.reading(), repairs: readTaskIdRepairs(index.repairsByTask.get(taskId), cutoff) };
    },
  };
}

/** Appends the facts of `facts` at most `cutoff` to `into`, and returns it. */
function upTo<V extends { readonly event_time: number }>(
  facts: readonly V[] | undefined,
  cutoff: number,
  into: V[],
): V[] {
  if (facts === undefined) return into;
  for (let index = 0; index < facts.length; index++) {
    const fact = facts[index] as V;
    if (fact.event_time <= cutoff) into.push(fact);
  }
  return into;
}

/** Operational calls (already known to be at most the cutoff), tallied into a CallsReading. */
class CallsTally {
  private direct = 0;
  private nondirect = 0;
  private unreadable = 0;
  private asOf = Number.NEGATIVE_INFINITY;
  private readonly tuples = new TupleSet();

  add(call: ModelCall): void {
    if (!call.operational) return;
    if (call.event_time > this.asOf) this.asOf = call.event_time;
    const basis = evidenceBasis(call);
    if (basis === "NONDIRECT") this.nondirect++;
    else if (basis === "UNREADABLE") this.unreadable++;
    else {
      this.direct++;
      const tuple = attributionCohort(call);
      if (tuple !== undefined) this.tuples.add(tuple);
    }
  }

  reading(): CallsReading {
    if (this.direct + this.nondirect + this.unreadable === 0) return NO_CALLS;
    const { direct, nondirect, unreadable, asOf } = this;
    return { direct, nondirect, unreadable, asOf, tuples: this.tuples.sorted() };
  }
}

/** Distinct tuples, by value (a tuple read back from a join response is an equal object, not always the same one). */
class TupleSet {
  private readonly keys: string[] = [];
  private readonly tuples: Cohort[] = [];

  add(tuple: Cohort): void {
    const key = cohortKey(tuple);
    if (!this.keys.includes(key)) {
      this.keys.push(key);
      this.tuples.push(tuple);
    }
  }

  /** Sorted by canonical JSON. */
  sorted(): Cohort[] {
    if (this.tuples.length < 2) return this.tuples;
    const order = this.keys.map((key, position) => ({ key, position })).sort((a, b) => byUtf8(a.key, b.key));
    return order.map(({ position }) => this.tuples[position] as Cohort);
  }
}

/** Repairs up to the cutoff, tallied into a RepairsReading. */
class RepairsTally {
  private count = 0;
  private asOf = Number.NEGATIVE_INFINITY;
  private attributable = false;

  add(repair: Repair): void {
    this.count++;
    if (repair.event_time > this.asOf) this.asOf = repair.event_time;
    if (repair.attributable) this.attributable = true;
  }

  reading(): RepairsReading {
    return this.count === 0 ? NO_REPAIRS : { count: this.count, asOf: this.asOf, attributable: this.attributable };
  }
}

/** A task_id's repairs up to the cutoff that name no Delivery: one naming a Delivery too is read with that Delivery. */
function readTaskIdRepairs(repairs: readonly Repair[], cutoff: number): RepairsReading {
  const tally = new RepairsTally();
  for (let index = 0; index < repairs.length; index++) {
    const repair = repairs[index] as Repair;
    if (repair.event_time <= cutoff && repair.delivery_id === undefined) tally.add(repair);
  }
  return tally.reading();
}

/** A Delivery's repairs up to the cutoff, by the task_id they name (if any). */
function readMemberRepairs(repairs: readonly Repair[], cutoff: number): MemberRepairsReading {
  const unnamed = new RepairsTally();
  const named = new Map<string, RepairsTally>();
  for (let index = 0; index < repairs.length; index++) {
    const repair = repairs[index] as Repair;
    if (repair.event_time > cutoff) continue;
    if (repair.task_id === undefined) unnamed.add(repair);
    else {
      let tally = named.get(repair.task_id);
      if (tally === undefined) named.set(repair.task_id, (tally = new RepairsTally()));
      tally.add(repair);
    }
  }
  const unnamedReading = unnamed.reading();
  if (named.size === 0) {
    return unnamedReading === NO_REPAIRS ? NO_MEMBER_REPAIRS : { unnamed: unnamedReading, named: [] };
  }
  const taskIds = [...named.keys()].sort(byUtf8);
  const byTask = taskIds.map((taskId) => ({ taskId, ...(named.get(taskId) as RepairsTally).reading() }));
  return { unnamed: unnamedReading, named: byTask };
}

/**
 * The repairs of a member Delivery that join the task of `taskId` (contract revision 3 change 6):
 * those naming no task, and those naming this one. A task without task_id joins only the former.
 */
export function memberRepairsOf(reading: MemberRepairsReading, taskId: string | undefined): RepairsReading[] {
  const named = taskId === undefined ? undefined : reading.named.find((entry) => entry.taskId === taskId);
  return named === undefined ? [reading.unnamed] : [reading.unnamed, named];
}

/**
 * Calls linked to a task by task_id and through its members, as one reading. A call linked both
 * ways is counted in each; nothing reads the counts but "any", and the time and tuples are a
 * maximum and a set, so the double count changes nothing.
 */
export function combineCalls(readings: readonly CallsReading[]): CallsReading {
  let direct = 0;
  let nondirect = 0;
  let unreadable = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  const tuples = new TupleSet();
  for (let index = 0; index < readings.length; index++) {
    const reading = readings[index] as CallsReading;
    direct += reading.direct;
    nondirect += reading.nondirect;
    unreadable += reading.unreadable;
    asOf = Math.max(asOf, reading.asOf);
    for (let tuple = 0; tuple < reading.tuples.length; tuple++) tuples.add(reading.tuples[tuple] as Cohort);
  }
  if (direct + nondirect + unreadable === 0) return NO_CALLS;
  return { direct, nondirect, unreadable, asOf, tuples: tuples.sorted() };
}

/** Repairs joined by task_id and through members (each repair edge is read along one link only). */
export function combineRepairs(readings: readonly RepairsReading[]): RepairsReading {
  let count = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  let attributable = false;
  for (let index = 0; index < readings.length; index++) {
    const reading = readings[index] as RepairsReading;
    count += reading.count;
    asOf = Math.max(asOf, reading.asOf);
    attributable ||= reading.attributable;
  }
  return count === 0 ? NO_REPAIRS : { count, asOf, attributable };
}

/**
 * The members' money as one reading: what `readMoney` gives for all their costs together (sums per
 * exact slice, exclusion counts, greatest time). A cost links to one Delivery, so members share none.
 */
export function combineMoney(readings: readonly MoneyReading[]): MoneyReading {
  // Most tasks have one member: its reading is already the combination (slices sorted, sums exact).
  if (readings.length === 1) return readings[0] as MoneyReading;
  const slices = new Map<string, MoneyShare>();
  const excluded: Record<string, number> = {};
  let asOf = Number.NEGATIVE_INFINITY;
  for (const reading of readings) {
    asOf = Math.max(asOf, reading.asOf);
    for (const [reason, count] of Object.entries(reading.excluded)) excluded[reason] = (excluded[reason] ?? 0) + count;
    for (const share of reading.shares) {
      const key = moneySliceKey(share.currency, share.source, share.costBasis);
      const known = slices.get(key);
      slices.set(key, { ...share, amountMinor: addExact(known?.amountMinor ?? 0, share.amountMinor) });
    }
  }
  const shares = [...slices.entries()].sort(([a], [b]) => byUtf8(a, b)).map(([, share]) => share);
  return { shares, excluded, asOf };
}
