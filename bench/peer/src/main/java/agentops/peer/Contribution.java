package agentops.peer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
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

  /** The repartition's value serde: the group key travels as the record key, so it is not written again. */
  static Serde<Delta> deltaSerde() {
    return Serdes.serdeFrom((topic, delta) -> writeDelta(delta), (topic, bytes) -> readDelta(bytes));
  }

  private static byte[] writeDelta(Delta delta) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      Contribution contribution = delta.contribution();
      out.writeByte(delta.sign());
      if (contribution == null) return bytes.toByteArray();
      out.writeByte(contribution.metric);
      out.writeLong(contribution.windowStart);
      out.writeByte(contribution.cohort.length);
      for (String part : contribution.cohort) out.writeUTF(part);
      out.writeByte((contribution.covered ? 1 : 0) | (contribution.eligible ? 2 : 0) | (contribution.hit ? 4 : 0) | (contribution.exclusion != null ? 8 : 0));
      out.writeLong(contribution.amount);
      if (contribution.exclusion != null) out.writeUTF(contribution.exclusion);
      out.writeLong(contribution.asOf);
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  private static Delta readDelta(byte[] value) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      int sign = in.readByte();
      if (in.available() == 0) return new Delta(sign, null);
      int metric = in.readByte();
      long windowStart = in.readLong();
      String[] cohort = new String[in.readByte()];
      for (int index = 0; index < cohort.length; index++) cohort[index] = in.readUTF();
      int flags = in.readByte();
      long amount = in.readLong();
      String exclusion = (flags & 8) != 0 ? in.readUTF() : null;
      return new Delta(sign, new Contribution(null, metric, windowStart, cohort, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, amount, exclusion, in.readLong()));
    } catch (IOException corrupt) {
      throw new UncheckedIOException(corrupt);
    }
  }
}
