package agentops.peer;

import java.util.Properties;

/**
 * What the bench passes (a properties file written from our catalog and engine defaults, so the
 * catalog's texts and minimum samples are not copied here).
 */
final class PeerConfig {
  record Metric(String version, String unit, long minimumSample) {}

  final String catalog;
  final Metric[] metrics = new Metric[Contribution.METRIC_IDS.length];
  final long windowMillis;
  final long thresholdHundredths;
  /** src/metrics/exact-sum.ts SUM_PAST_SAFE_INTEGER: the reason of a sum past 2^53 − 1. */
  final String sumPastSafeInteger;

  PeerConfig(Properties properties) {
    catalog = required(properties, "catalog");
    windowMillis = Long.parseLong(required(properties, "window.millis"));
    thresholdHundredths = Long.parseLong(required(properties, "coverage.threshold.hundredths"));
    sumPastSafeInteger = required(properties, "na.sum.past.safe.integer");
    for (int index = 0; index < metrics.length; index++) {
      String prefix = "metric." + Contribution.METRIC_IDS[index] + ".";
      metrics[index] = new Metric(required(properties, prefix + "version"), required(properties, prefix + "unit"), Long.parseLong(required(properties, prefix + "minimum.sample")));
    }
  }

  static String required(Properties properties, String name) {
    String value = properties.getProperty(name);
    if (value == null) throw new IllegalArgumentException("missing property " + name);
    return value;
  }
}
