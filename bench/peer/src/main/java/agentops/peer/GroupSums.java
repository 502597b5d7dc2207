package agentops.peer;

import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The running sums of one result group (src/metrics/group-aggregate.ts), the value of the DSL
 * aggregation. Every field is a sum, so a retraction restores the previous state, except as_of,
 * the greatest time among the present contributions: the few greatest distinct times are kept
 * with their counts, and a retraction that empties them all while older times remain throws
 * instead of publishing a wrong as_of (the workload retracts a handful of contributions).
 */
final class GroupSums {
  static final long NO_AS_OF = Long.MIN_VALUE;
  private static final int TRACKED_TIMES = 8;

  int metric = -1;
  long windowStart;
  String[] cohort;
  long units;
  long covered;
  long eligible;
  long hits;
  long amount;
  final TreeMap<String, Long> exclusions = new TreeMap<>();
  /** The greatest distinct as_of times, descending, and how many present contributions have each. */
  private long[] times = new long[0];
  private long[] counts = new long[0];
  /** Present contributions whose time is not tracked: all at or before `floor`. */
  private long untracked;
  private long floor = NO_AS_OF;

  GroupSums apply(Contribution contribution, int sign) {
    if (metric < 0) {
      metric = contribution.metric();
      windowStart = contribution.windowStart();
      cohort = contribution.cohort();
    }
    units += sign;
    if (contribution.covered()) covered += sign;
    if (contribution.eligible()) eligible += sign;
    if (contribution.hit()) hits += sign;
    amount += sign * contribution.amount();
    if (contribution.exclusion() != null) {
      long next = exclusions.getOrDefault(contribution.exclusion(), 0L) + sign;
      if (next == 0) exclusions.remove(contribution.exclusion());
      else exclusions.put(contribution.exclusion(), next);
    }
    if (sign > 0) addTime(contribution.asOf());
    else removeTime(contribution.asOf());
    return this;
  }

  long asOf() {
    if (times.length > 0) return times[0];
    if (untracked > 0) throw new IllegalStateException("as_of unknown: the " + TRACKED_TIMES + " latest times of a group were retracted");
    return NO_AS_OF;
  }

  private void addTime(long time) {
    int at = 0;
    while (at < times.length && times[at] > time) at++;
    if (at < times.length && times[at] == time) {
      counts[at]++;
      return;
    }
    if (untracked > 0 && time <= floor) {
      untracked++;
      return;
    }
    long[] nextTimes = new long[times.length + 1];
    long[] nextCounts = new long[times.length + 1];
    System.arraycopy(times, 0, nextTimes, 0, at);
    System.arraycopy(counts, 0, nextCounts, 0, at);
    nextTimes[at] = time;
    nextCounts[at] = 1;
    System.arraycopy(times, at, nextTimes, at + 1, times.length - at);
    System.arraycopy(counts, at, nextCounts, at + 1, times.length - at);
    times = nextTimes;
    counts = nextCounts;
    if (times.length > TRACKED_TIMES) {
      int last = times.length - 1;
      untracked += counts[last];
      floor = Math.max(floor, times[last]);
      times = java.util.Arrays.copyOf(times, last);
      counts = java.util.Arrays.copyOf(counts, last);
    }
  }

  private void removeTime(long time) {
    for (int at = 0; at < times.length; at++) {
      if (times[at] != time) continue;
      if (--counts[at] == 0) {
        times = remove(times, at);
        counts = remove(counts, at);
      }
      return;
    }
    if (untracked == 0 || time > floor) throw new IllegalStateException("retracted a contribution the group does not hold");
    if (--untracked == 0) floor = NO_AS_OF;
  }

  private static long[] remove(long[] values, int at) {
    long[] next = new long[values.length - 1];
    System.arraycopy(values, 0, next, 0, at);
    System.arraycopy(values, at + 1, next, at, values.length - at - 1);
    return next;
  }

  static Serde<GroupSums> serde() {
    return Serdes.serdeFrom((topic, sums) -> sums.toBytes(), (topic, bytes) -> fromBytes(bytes));
  }

  private byte[] toBytes() {
    Codec.Writer out = new Codec.Writer(160).i8(metric).i64(windowStart).i8(cohort == null ? 0 : cohort.length);
    if (cohort != null) for (String part : cohort) out.text(part);
    out.i64(units).i64(covered).i64(eligible).i64(hits).i64(amount).i64(untracked).i64(floor).i8(times.length);
    for (int at = 0; at < times.length; at++) out.i64(times[at]).i64(counts[at]);
    out.i8(exclusions.size());
    for (Map.Entry<String, Long> entry : exclusions.entrySet()) out.text(entry.getKey()).i64(entry.getValue());
    return out.finish();
  }

  private static GroupSums fromBytes(byte[] value) {
    if (value == null) return null;
    Codec.Reader in = new Codec.Reader(value);
    GroupSums sums = new GroupSums();
    sums.metric = in.i8();
    sums.windowStart = in.i64();
    sums.cohort = new String[in.i8()];
    for (int index = 0; index < sums.cohort.length; index++) sums.cohort[index] = in.text();
    sums.units = in.i64();
    sums.covered = in.i64();
    sums.eligible = in.i64();
    sums.hits = in.i64();
    sums.amount = in.i64();
    sums.untracked = in.i64();
    sums.floor = in.i64();
    int tracked = in.i8();
    sums.times = new long[tracked];
    sums.counts = new long[tracked];
    for (int at = 0; at < tracked; at++) {
      sums.times[at] = in.i64();
      sums.counts[at] = in.i64();
    }
    for (int count = in.i8(); count > 0; count--) sums.exclusions.put(in.text(), in.i64());
    return sums;
  }
}
