package agentops.peer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The published record of a group (src/metrics/render-result.ts) for the two metric shapes here: ratio and sum. */
final class ResultRender {
  static final long MAX_SAFE = (1L << 53) - 1;
  /** What each metric counts, singular and plural (src/metrics/na-reason.ts UNIT_NOUNS). */
  private static final String[][] UNIT_NOUNS = {{"call", "calls"}, {"fact", "facts"}};

  private ResultRender() {}

  /** The record's JSON, or null once no contribution is left (the key's tombstone). */
  static String render(GroupSums sums, PeerConfig config) {
    if (sums.units == 0) return null;
    PeerConfig.Metric definition = config.metrics[sums.metric];
    boolean ratio = sums.metric == Contribution.EVIDENCE_BASIS;
    boolean missing = sums.covered == 0 || sums.eligible == 0;
    boolean exact = ratio || Math.abs(sums.amount) <= MAX_SAFE;
    // Contract revision 3 change 2: NOT_AVAILABLE, for any reason, precedes BELOW_MINIMUM_SAMPLE.
    String status = missing || !exact ? "NOT_AVAILABLE" : sums.eligible < definition.minimumSample() ? "BELOW_MINIMUM_SAMPLE" : "PUBLISHED";
    StringBuilder out = new StringBuilder(640);
    out.append("{\"catalog\":");
    Json.string(out, config.catalog);
    out.append(",\"metric_id\":\"").append(Contribution.METRIC_IDS[sums.metric]).append("\",\"metric_version\":");
    Json.string(out, definition.version());
    out.append(",\"scope\":{\"kind\":\"window\",\"start\":\"").append(Json.timestamp(sums.windowStart)).append("\",\"end\":\"").append(Json.timestamp(sums.windowStart + config.windowMillis)).append("\"},\"cohort\":");
    Contribution.cohortJson(out, sums.cohort);
    out.append(",\"status\":\"").append(status).append("\",\"value\":");
    boolean published = status.equals("PUBLISHED");
    if (!published) out.append("null");
    else if (ratio) Json.number(out, (double) sums.hits / sums.eligible);
    else out.append(sums.amount);
    out.append(",\"na_reason\":");
    if (status.equals("NOT_AVAILABLE")) Json.string(out, missing ? unavailableReason(sums) : config.sumPastSafeInteger);
    else out.append("null");
    out.append(",\"measures\":");
    if (!published) out.append("null");
    else if (ratio) out.append("{\"numerator\":").append(sums.hits).append(",\"denominator\":").append(sums.eligible).append(",\"categories\":null,\"sum\":null,\"contributing\":null,\"unit\":");
    else out.append("{\"numerator\":null,\"denominator\":null,\"categories\":null,\"sum\":").append(sums.amount).append(",\"contributing\":").append(sums.eligible).append(",\"unit\":");
    if (published) {
      Json.string(out, definition.unit());
      out.append(",\"currency\":null}");
    }
    long candidates = sums.units;
    out.append(",\"eligible_units\":").append(sums.eligible).append(",\"minimum_sample\":").append(definition.minimumSample());
    out.append(",\"coverage\":{\"numerator\":").append(sums.covered).append(",\"denominator\":").append(candidates).append(",\"raw_ratio\":");
    Json.number(out, (double) sums.covered / candidates);
    String state = sums.covered == 0 ? "NO_COVERAGE" : sums.covered < candidates ? "PARTIAL" : "FULL";
    boolean alert = config.thresholdHundredths != 0 && 100 * sums.covered < config.thresholdHundredths * candidates;
    out.append(",\"state\":\"").append(state).append("\",\"alert\":").append(alert).append(",\"threshold_hundredths\":").append(config.thresholdHundredths).append("},\"exclusions\":{");
    boolean first = true;
    for (Map.Entry<String, Long> entry : sums.exclusions.entrySet()) {
      if (!first) out.append(',');
      first = false;
      Json.string(out, entry.getKey());
      out.append(':').append(entry.getValue());
    }
    out.append("},\"as_of\":");
    long asOf = sums.asOf();
    if (asOf == GroupSums.NO_AS_OF) out.append("null");
    else out.append('"').append(Json.timestamp(asOf)).append('"');
    return out.append('}').toString();
  }

  /**
   * Contract revision 3 change 13 (src/metrics/na-reason.ts unavailableReason): the reason says
   * which "no eligible unit" case the record is in, with the counts published beside it.
   */
  static String unavailableReason(GroupSums sums) {
    String singular = UNIT_NOUNS[sums.metric][0];
    String plural = UNIT_NOUNS[sums.metric][1];
    String unitReasons = listed(sums, false);
    String costReasons = listed(sums, true);
    List<String> parts = new ArrayList<>(3);
    if (sums.units == 0) {
      parts.add("N/A: no candidate " + plural);
      if (!unitReasons.isEmpty()) parts.add("outside the base scope: " + unitReasons);
    } else {
      String state = sums.covered == 0 ? "none covered" : sums.covered + " covered, none eligible";
      parts.add("N/A: " + sums.units + " candidate " + (sums.units == 1 ? singular : plural) + ", " + state);
      if (!unitReasons.isEmpty()) parts.add("excluded: " + unitReasons);
    }
    if (!costReasons.isEmpty()) parts.add("costs left out: " + costReasons);
    return String.join("; ", parts);
  }

  /** "20 NONDIRECT_EVIDENCE, 3 REQUIREMENT_CHANGED": reasons ending in _COST count costs, the others units. */
  private static String listed(GroupSums sums, boolean costs) {
    List<String> listed = new ArrayList<>(sums.exclusions.size());
    for (Map.Entry<String, Long> entry : sums.exclusions.entrySet()) if (entry.getKey().endsWith("_COST") == costs) listed.add(entry.getValue() + " " + entry.getKey());
    return String.join(", ", listed);
  }
}
