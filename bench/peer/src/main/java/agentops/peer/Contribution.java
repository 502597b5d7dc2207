package agentops.peer;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * One unit's part in one result group (src/metrics/contribution.ts, for the two metrics here:
 * every contribution is a candidate, none has a category or money), and the signed form in which
 * it travels to the group aggregation: +1 when it starts counting, -1 when it stops.
 */
record Contribution(String groupKey, int metric, long windowStart, String[] cohort, boolean covered, boolean eligible, boolean hit, long amount, String exclusion, long asOf) {
  static final int TOKEN_USAGE = 0;
  static final int EVIDENCE_BASIS = 1;
  static final String[] METRIC_IDS = {"operational-token-usage", "direct-evidence-basis-rate"};

  /** A contribution with a sign, as the group aggregation reads it; a null contribution marks the end of the input. */
  record Delta(int sign, Contribution contribution) {}

  static Contribution of(int metric, long windowStart, long windowMillis, String[] cohort, boolean covered, boolean eligible, boolean hit, long amount, String exclusion, long asOf) {
    return new Contribution(resultKey(metric, windowStart, windowMillis, cohort), metric, windowStart, cohort, covered, eligible, hit, amount, exclusion, asOf);
  }

  /** Equal in every field a group sums (the cohort is part of the group key). */
  boolean sameAs(Contribution other) {
    return groupKey.equals(other.groupKey) && covered == other.covered && eligible == other.eligible && hit == other.hit && amount == other.amount && asOf == other.asOf && Objects.equals(exclusion, other.exclusion);
  }

  /** src/metrics/scope.ts resultKey: RFC 8785 JSON of {cohort, metric_id, scope}; cohort keys come sorted. */
  static String resultKey(int metric, long windowStart, long windowMillis, String[] cohort) {
    StringBuilder out = new StringBuilder(160);
    out.append("{\"cohort\":");
    cohortJson(out, cohort);
    out.append(",\"metric_id\":\"").append(METRIC_IDS[metric]).append(SCOPES.computeIfAbsent(windowStart, start -> "\",\"scope\":{\"end\":\"" + Json.timestamp(start + windowMillis) + "\",\"kind\":\"window\",\"start\":\"" + Json.timestamp(start) + "\"}}"));
    return out.toString();
  }

  /** A window's scope JSON, by its start: the same few windows are keyed again for every contribution of every record. */
  private static final Map<Long, String> SCOPES = new ConcurrentHashMap<>();

  static void cohortJson(StringBuilder out, String[] cohort) {
    out.append('{');
    for (int index = 0; index < cohort.length; index += 2) {
      if (index > 0) out.append(',');
      Json.string(out, cohort[index]);
      out.append(':');
      Json.string(out, cohort[index + 1]);
    }
    out.append('}');
  }

  /** The repartition's value serde: the group key travels as the record key, so it is not written again. */
  static Serde<Delta> deltaSerde() {
    return Serdes.serdeFrom((topic, delta) -> writeDelta(delta), (topic, bytes) -> readDelta(bytes));
  }

  private static byte[] writeDelta(Delta delta) {
    Contribution contribution = delta.contribution();
    Codec.Writer out = new Codec.Writer(96).i8(delta.sign());
    if (contribution == null) return out.finish();
    out.i8(contribution.metric).i64(contribution.windowStart).i8(contribution.cohort.length);
    for (String part : contribution.cohort) out.text(part);
    out.i8((contribution.covered ? 1 : 0) | (contribution.eligible ? 2 : 0) | (contribution.hit ? 4 : 0)).i64(contribution.amount).text(contribution.exclusion).i64(contribution.asOf);
    return out.finish();
  }

  private static Delta readDelta(byte[] value) {
    Codec.Reader in = new Codec.Reader(value);
    int sign = in.i8();
    if (in.atEnd()) return new Delta(sign, null);
    int metric = in.i8();
    long windowStart = in.i64();
    String[] cohort = new String[in.i8()];
    for (int index = 0; index < cohort.length; index++) cohort[index] = in.text();
    int flags = in.i8();
    long amount = in.i64();
    String exclusion = in.text();
    return new Delta(sign, new Contribution(null, metric, windowStart, cohort, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, amount, exclusion, in.i64()));
  }
}
