import type { DeliverySummary, ModelCall, Repair } from "../contract/facts.ts";
import { attributionCohort } from "./attribution.ts";
import type { MoneyShare } from "./contribution.ts";
import { addExact } from "./exact-sum.ts";
import type { FactIndex } from "./fact-index.ts";
import { byUtf8 } from "./key-order.ts";
import { moneySliceKey, readMoney, type MoneyReading } from "./money.ts";
import type { Cohort } from "./result-record.ts";
import { deliveryCosts } from "./units/delivery-unit.ts";

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
  readonly repairs: RepairsReading;
}

export interface TaskIdReading {
  readonly calls: CallsReading;
  readonly repairs: RepairsReading;
}

/** Operational calls up to the cutoff: whether any, their greatest time, their distinct complete tuples. */
export interface CallsReading {
  readonly count: number;
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

export interface TaskInputs {
  member(deliveryId: string, cutoff: number): MemberReading;
  taskId(taskId: string, cutoff: number): TaskIdReading;
}

const NO_CALLS: CallsReading = { count: 0, asOf: Number.NEGATIVE_INFINITY, tuples: [] };
const NO_REPAIRS: RepairsReading = { count: 0, asOf: Number.NEGATIVE_INFINITY, attributable: false };
export const EMPTY_MEMBER: MemberReading = { summaries: [], money: readMoney([]), calls: NO_CALLS, repairs: NO_REPAIRS };
export const EMPTY_TASK_ID: TaskIdReading = { calls: NO_CALLS, repairs: NO_REPAIRS };

/** The readings from an index that holds every fact linked to the Delivery or task_id. */
export function indexTaskInputs(index: FactIndex): TaskInputs {
  return {
    member(deliveryId, cutoff) {
      const readable = (time: number): boolean => time <= cutoff;
      const summaries: DeliverySummary[] = [];
      for (const summary of index.summariesByDelivery.get(deliveryId)) if (readable(summary.event_time)) summaries.push(summary);
      return {
        summaries: summaries.sort((a, b) => byUtf8(a.fact_id, b.fact_id)),
        money: readMoney(deliveryCosts(deliveryId, index, readable).costs),
        calls: readCalls(index.callsByDelivery.get(deliveryId), cutoff),
        repairs: readRepairs(index.repairsByDelivery.get(deliveryId), cutoff),
      };
    },
    taskId(taskId, cutoff) {
      return { calls: readCalls(index.callsByTask.get(taskId), cutoff), repairs: readRepairs(index.repairsByTask.get(taskId), cutoff) };
    },
  };
}

function readCalls(calls: Iterable<ModelCall>, cutoff: number): CallsReading {
  let count = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  const tuples = new Map<string, Cohort>();
  for (const call of calls) {
    if (!call.operational || call.event_time > cutoff) continue;
    count++;
    asOf = Math.max(asOf, call.event_time);
    const tuple = attributionCohort(call);
    if (tuple !== undefined) tuples.set(JSON.stringify(tuple), tuple);
  }
  return count === 0 ? NO_CALLS : { count, asOf, tuples: sortedTuples(tuples) };
}

function readRepairs(repairs: Iterable<Repair>, cutoff: number): RepairsReading {
  let count = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  let attributable = false;
  for (const repair of repairs) {
    if (repair.event_time > cutoff) continue;
    count++;
    asOf = Math.max(asOf, repair.event_time);
    if (repair.attributable) attributable = true;
  }
  return count === 0 ? NO_REPAIRS : { count, asOf, attributable };
}

function sortedTuples(tuples: ReadonlyMap<string, Cohort>): Cohort[] {
  return [...tuples.entries()].sort(([a], [b]) => byUtf8(a, b)).map(([, tuple]) => tuple);
}

/**
 * Calls linked to a task by task_id and through its members, as one reading. A call linked both
 * ways is counted in each; nothing reads the count but "any", and the time and tuples are a
 * maximum and a set, so the double count changes nothing.
 */
export function combineCalls(readings: Iterable<CallsReading>): CallsReading {
  let count = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  const tuples = new Map<string, Cohort>();
  for (const reading of readings) {
    count += reading.count;
    asOf = Math.max(asOf, reading.asOf);
    for (const tuple of reading.tuples) tuples.set(JSON.stringify(tuple), tuple);
  }
  return count === 0 ? NO_CALLS : { count, asOf, tuples: sortedTuples(tuples) };
}

/** Repairs linked by task_id and through members (a repair linked both ways: a maximum and an "any" again). */
export function combineRepairs(readings: Iterable<RepairsReading>): RepairsReading {
  let count = 0;
  let asOf = Number.NEGATIVE_INFINITY;
  let attributable = false;
  for (const reading of readings) {
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
export function combineMoney(readings: Iterable<MoneyReading>): MoneyReading {
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
  const shares = [...slices.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, share]) => share);
  return { shares, excluded, asOf };
}
