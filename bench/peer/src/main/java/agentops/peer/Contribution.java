package agentops.peer;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * One unit's part in one result group (src/metrics/contribution.ts, for the two metrics here:
 * every contribution is a candidate, none has a category or money).
 */
record Contribution(String groupKey, int metric, long windowStart, String[] cohort, boolean covered, boolean eligible, boolean hit, long amount, String exclusion, long asOf) {
  static final int TOKEN_USAGE = 0;
  static final int EVIDENCE_BASIS = 1;
  static final String[] METRIC_IDS = {"operational-token-usage", "direct-evidence-basis-rate"};

  static Contribution of(int metric, long windowStart, long windowMillis, String[] cohort, boolean covered, boolean eligible, boolean hit, long amount, String exclusion, long asOf) {
    return new Contribution(resultKey(metric, windowStart, windowMillis, cohort), metric, windowStart, cohort, covered, eligible, hit, amount, exclusion, asOf);
  }

  /** src/metrics/scope.ts resultKey: RFC 8785 JSON of {cohort, metric_id, scope}; cohort keys come sorted. */
  static String resultKey(int metric, long windowStart, long windowMillis, String[] cohort) {
    StringBuilder out = new StringBuilder(160);
    out.append("{\"cohort\":");
    cohortJson(out, cohort);
    out.append(",\"metric_id\":\"").append(METRIC_IDS[metric]).append("\",\"scope\":{\"end\":\"").append(Json.timestamp(windowStart + windowMillis)).append("\",\"kind\":\"window\",\"start\":\"").append(Json.timestamp(windowStart)).append("\"}}");
    return out.toString();
  }

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

  void write(DataOutputStream out) throws IOException {
    out.writeUTF(groupKey);
    out.writeByte(metric);
    out.writeLong(windowStart);
    out.writeByte(cohort.length);
    for (String part : cohort) out.writeUTF(part);
    out.writeByte((covered ? 1 : 0) | (eligible ? 2 : 0) | (hit ? 4 : 0) | (exclusion != null ? 8 : 0));
    out.writeLong(amount);
    if (exclusion != null) out.writeUTF(exclusion);
    out.writeLong(asOf);
  }

  static Contribution read(DataInputStream in) throws IOException {
    String groupKey = in.readUTF();
    int metric = in.readByte();
    long windowStart = in.readLong();
    String[] cohort = new String[in.readByte()];
    for (int index = 0; index < cohort.length; index++) cohort[index] = in.readUTF();
    int flags = in.readByte();
    long amount = in.readLong();
    String exclusion = (flags & 8) != 0 ? in.readUTF() : null;
    return new Contribution(groupKey, metric, windowStart, cohort, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, amount, exclusion, in.readLong());
  }
}
