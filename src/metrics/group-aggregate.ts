import type { Contribution, MoneyShare } from "./contribution.ts";
import { ExactSum } from "./exact-sum.ts";
import { moneySliceKey } from "./money.ts";

/** A group's as_of times with how many contributions have each (see GroupAggregate.apply). */
export interface AsOfCounts {
  /** Adds `delta` to the time's count and returns the new count (a count of 0 is forgotten). */
  bump(time: number, delta: number): number;
  /** The greatest finite time with a count, or undefined. */
  max(): number | undefined;
}

export interface MoneySliceTotal {
  readonly currency: string;
  readonly source: string;
  readonly costBasis: string;
  units: number;
  readonly amountMinor: ExactSum;
}

/**
 * The running sums of one result group. Every field is a sum (or a counted multiset), so adding a
 * contribution and subtracting it again restores the previous state exactly: integers only, with
 * durations in integer microseconds, so floating-point order never leaks into a result.
 */
export class GroupAggregate {
  readonly sample: Contribution;
  units = 0;
  candidates = 0;
  covered = 0;
  eligible = 0;
  hits = 0;
  /** Durations (µs) or tokens: exact past 2^53 − 1 (rendered NOT_AVAILABLE there). */
  readonly amount = new ExactSum();
  readonly categories = new Map<string, number>();
  readonly exclusions = new Map<string, number>();
  readonly money = new Map<string, MoneySliceTotal>();
  /**
   * The greatest finite as_of among the contributions, kept as contributions come and go: only
   * retracting the last contribution at the maximum time needs the group's other times (`AsOfCounts.max`).
   * Recomputing max() on every render made a stream of flushes quadratic in a group's units.
   */
  latest: number | undefined;

  constructor(sample: Contribution) {
    this.sample = sample;
  }

  /**
   * Adds (sign 1) or retracts (sign -1) one contribution. `times` is the group's counted multiset of
   * as_of times, kept in the engine's state beside the group (it grows with distinct event times,
   * so it is a keyed set on disk, not part of the group's value).
   */
  apply(contribution: Contribution, sign: 1 | -1, times: AsOfCounts): void {
    this.units += sign;
    if (contribution.candidate) this.candidates += sign;
    if (contribution.covered) this.covered += sign;
    if (contribution.eligible) this.eligible += sign;
    if (contribution.hit) this.hits += sign;
    if (contribution.amount !== 0) this.amount.add(contribution.amount, sign);
    if (contribution.category !== undefined) bump(this.categories, contribution.category, sign);
    // for…in, not Object.entries: most contributions have no exclusion, and this runs per contribution.
    const exclusions = contribution.exclusions;
    for (const reason in exclusions) bump(this.exclusions, reason, sign * (exclusions[reason] as number));
    const money = contribution.money;
    for (let index = 0; index < money.length; index++) {
      const share = money[index] as MoneyShare;
      const key = moneySliceKey(share.currency, share.source, share.costBasis);
      let total = this.money.get(key);
      if (total === undefined) {
        total = {
          currency: share.currency,
          source: share.source,
          costBasis: share.costBasis,
          units: 0,
          amountMinor: new ExactSum(),
        };
        this.money.set(key, total);
      }
      total.units += sign;
      total.amountMinor.add(share.amountMinor, sign);
      if (total.units === 0) this.money.delete(key);
    }
    const time = contribution.asOf;
    const remaining = times.bump(time, sign);
    if (!Number.isFinite(time)) return;
    if (sign === 1) {
      if (this.latest === undefined || time > this.latest) this.latest = time;
    } else if (time === this.latest && remaining === 0) {
      this.latest = times.max();
    }
  }

  /**
   * The sums of several partial aggregates of one group (the partitions' parts of it): every field
   * is a sum, and as_of the greatest of the parts' greatest times, so the result is the aggregate
   * the single engine holds for the union of their contributions. Undefined when no part has units.
   */
  static sum(parts: Iterable<GroupAggregate>): GroupAggregate | undefined {
    let total: GroupAggregate | undefined;
    for (const part of parts) {
      if (part.isEmpty) continue;
      total ??= new GroupAggregate(part.sample);
      total.units += part.units;
      total.candidates += part.candidates;
      total.covered += part.covered;
      total.eligible += part.eligible;
      total.hits += part.hits;
      total.amount.add(part.amount.exact);
      for (const [category, count] of part.categories) bump(total.categories, category, count);
      for (const [reason, count] of part.exclusions) bump(total.exclusions, reason, count);
      for (const [key, slice] of part.money) {
        let sum = total.money.get(key);
        if (sum === undefined) {
          sum = {
            currency: slice.currency,
            source: slice.source,
            costBasis: slice.costBasis,
            units: 0,
            amountMinor: new ExactSum(),
          };
          total.money.set(key, sum);
        }
        sum.units += slice.units;
        sum.amountMinor.add(slice.amountMinor.exact);
        if (sum.units === 0) total.money.delete(key);
      }
      if (part.latest !== undefined && (total.latest === undefined || part.latest > total.latest))
        total.latest = part.latest;
    }
    return total;
  }

  get isEmpty(): boolean {
    return this.units === 0;
  }

  asOf(): number | undefined {
    return this.latest;
  }
}

function bump<K>(counts: Map<K, number>, key: K, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}
