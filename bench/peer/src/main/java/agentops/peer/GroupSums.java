package agentops.peer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * The running sums of one result group (src/metrics/group-aggregate.ts): every field is a sum, so
 * a retraction restores the previous state. as_of is the greatest as_of among the group's present
 * contributions; its multiset lives in a store of its own (one entry per distinct time), and only
 * retracting the last contribution at the maximum needs a scan of it.
 */
final class GroupSums {
  static final long MAX_SAFE = (1L << 53) - 1;
  static final long NO_AS_OF = Long.MIN_VALUE;

  int metric;
  long windowStart;
  String[] cohort;
  long units;
  long candidates;
  long covered;
  long eligible;
  long hits;
  long amount;
  final TreeMap<String, Long> exclusions = new TreeMap<>();
  long asOf = NO_AS_OF;

  static GroupSums startedBy(Contribution contribution) {
    GroupSums sums = new GroupSums();
    sums.metric = contribution.metric();
    sums.windowStart = contribution.windowStart();
    sums.cohort = contribution.cohort();
    return sums;
  }

  void apply(Contribution contribution, int sign) {
    units += sign;
    candidates += sign;
    if (contribution.covered()) covered += sign;
    if (contribution.eligible()) eligible += sign;
    if (contribution.hit()) hits += sign;
    amount += sign * contribution.amount();
    if (contribution.exclusion() != null) {
      long next = exclusions.getOrDefault(contribution.exclusion(), 0L) + sign;
      if (next == 0) exclusions.remove(contribution.exclusion());
      else exclusions.put(contribution.exclusion(), next);
    }
  }

  /** The published record (src/metrics/render-result.ts) for the two metric shapes here: ratio and sum. */
  String render(PeerConfig config) {
    PeerConfig.Metric definition = config.metrics[metric];
    boolean ratio = metric == Contribution.EVIDENCE_BASIS;
    String computable = covered == 0 || eligible == 0 ? "NOT_AVAILABLE" : eligible < definition.minimumSample() ? "BELOW_MINIMUM_SAMPLE" : "PUBLISHED";
    boolean exact = ratio || Math.abs(amount) <= MAX_SAFE;
    String status = computable.equals("PUBLISHED") && !exact ? "NOT_AVAILABLE" : computable;
    StringBuilder out = new StringBuilder(640);
    out.append("{\"catalog\":");
    Json.string(out, config.catalog);
    out.append(",\"metric_id\":\"").append(Contribution.METRIC_IDS[metric]).append("\",\"metric_version\":");
    Json.string(out, definition.version());
    out.append(",\"scope\":{\"kind\":\"window\",\"start\":\"").append(Json.timestamp(windowStart)).append("\",\"end\":\"").append(Json.timestamp(windowStart + config.windowMillis)).append("\"},\"cohort\":");
    Contribution.cohortJson(out, cohort);
    out.append(",\"status\":\"").append(status).append("\",\"value\":");
    boolean published = status.equals("PUBLISHED");
    if (!published) out.append("null");
    else if (ratio) Json.number(out, (double) hits / eligible);
    else out.append(amount);
    out.append(",\"na_reason\":");
    if (status.equals("NOT_AVAILABLE")) Json.string(out, computable.equals("PUBLISHED") ? "SUM_PAST_SAFE_INTEGER" : definition.missing());
    else out.append("null");
    out.append(",\"measures\":");
    if (!published) out.append("null");
    else if (ratio) out.append("{\"numerator\":").append(hits).append(",\"denominator\":").append(eligible).append(",\"categories\":null,\"sum\":null,\"contributing\":null,\"unit\":");
    else out.append("{\"numerator\":null,\"denominator\":null,\"categories\":null,\"sum\":").append(amount).append(",\"contributing\":").append(eligible).append(",\"unit\":");
    if (published) {
      Json.string(out, definition.unit());
      out.append(",\"currency\":null}");
    }
    out.append(",\"eligible_units\":").append(eligible).append(",\"minimum_sample\":").append(definition.minimumSample());
    out.append(",\"coverage\":{\"numerator\":").append(covered).append(",\"denominator\":").append(candidates).append(",\"raw_ratio\":");
    if (candidates == 0) out.append("null");
    else Json.number(out, (double) covered / candidates);
    String state = candidates == 0 ? "NO_POPULATION" : covered == 0 ? "NO_COVERAGE" : covered < candidates ? "PARTIAL" : "FULL";
    boolean alert = config.thresholdHundredths != 0 && candidates != 0 && 100 * covered < config.thresholdHundredths * candidates;
    out.append(",\"state\":\"").append(state).append("\",\"alert\":").append(alert).append(",\"threshold_hundredths\":").append(config.thresholdHundredths).append("},\"exclusions\":{");
    boolean first = true;
    for (Map.Entry<String, Long> entry : exclusions.entrySet()) {
      if (!first) out.append(',');
      first = false;
      Json.string(out, entry.getKey());
      out.append(':').append(entry.getValue());
    }
    out.append("},\"as_of\":");
    if (asOf == NO_AS_OF) out.append("null");
    else out.append('"').append(Json.timestamp(asOf)).append('"');
    return out.append('}').toString();
  }

  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(metric);
      out.writeLong(windowStart);
      out.writeByte(cohort.length);
      for (String part : cohort) out.writeUTF(part);
      for (long value : new long[] {units, candidates, covered, eligible, hits, amount, asOf}) out.writeLong(value);
      out.writeInt(exclusions.size());
      for (Map.Entry<String, Long> entry : exclusions.entrySet()) {
        out.writeUTF(entry.getKey());
        out.writeLong(entry.getValue());
      }
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  static GroupSums fromBytes(byte[] value) {
    GroupSums sums = new GroupSums();
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      sums.metric = in.readByte();
      sums.windowStart = in.readLong();
      sums.cohort = new String[in.readByte()];
      for (int index = 0; index < sums.cohort.length; index++) sums.cohort[index] = in.readUTF();
      sums.units = in.readLong();
      sums.candidates = in.readLong();
      sums.covered = in.readLong();
      sums.eligible = in.readLong();
      sums.hits = in.readLong();
      sums.amount = in.readLong();
      sums.asOf = in.readLong();
      for (int count = in.readInt(); count > 0; count--) sums.exclusions.put(in.readUTF(), in.readLong());
    } catch (IOException corrupt) {
      throw new UncheckedIOException(corrupt);
    }
    return sums;
  }
}
