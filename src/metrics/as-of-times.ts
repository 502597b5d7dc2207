import type { AsOfCounts } from "./group-aggregate.ts";
import type { LinkTable } from "./tables.ts";

/** An hour of event time. */
const AS_OF_BUCKET_MILLIS = 3_600_000;

/**
 * The member of a group's as_of multiset that holds this time: its hour. A commit then writes one
 * entry per group and hour it touched, not one per distinct event time (facts arrive with
 * millisecond times, so per-time entries were most of a commit's writes).
 */
function asOfBucket(time: number): string {
  return Number.isFinite(time) ? String(Math.floor(time / AS_OF_BUCKET_MILLIS)) : String(time);
}

/**
 * The as_of multiset of the group being applied, in its table (one object for every group, not a
 * closure per contribution): set `group` before handing it to `GroupAggregate.apply`.
 */
export class GroupAsOfTimes implements AsOfCounts {
  group = "";

  private readonly asOfTimes: LinkTable<Map<number, number>>;

  constructor(asOfTimes: LinkTable<Map<number, number>>) {
    this.asOfTimes = asOfTimes;
  }

  bump(time: number, delta: number): number {
    const bucket = asOfBucket(time);
    // Mutated in place and written back (add marks the member dirty): copying an hour's times per
    // contribution would be quadratic in a busy group's hour.
    const known = this.asOfTimes.updateMember(this.group, bucket);
    const counts = known ?? new Map<number, number>();
    const count = (counts.get(time) ?? 0) + delta;
    if (count === 0) counts.delete(time);
    else counts.set(time, count);
    if (counts.size === 0) this.asOfTimes.delete(this.group, bucket);
    else if (known === undefined) this.asOfTimes.add(this.group, bucket, counts, 16);
    return count;
  }

  max(): number | undefined {
    let latest: number | undefined;
    for (const counts of this.asOfTimes.get(this.group)) {
      for (const time of counts.keys())
        if (Number.isFinite(time) && (latest === undefined || time > latest)) latest = time;
    }
    return latest;
  }
}
