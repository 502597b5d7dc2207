package agentops.peer;

import java.util.Properties;

/**
 * What the bench passes (a properties file written from our catalog and engine defaults, so the
 * catalog's texts and minimum samples are not copied here).
 */
final class PeerConfig {
  record Metric(String version, String unit, String missing, long minimumSample) {}

  final String catalog;
  final Metric[] metrics = new Metric[Contribution.METRIC_IDS.length];
  final long windowMillis;
  final long thresholdHundredths;

  PeerConfig(Properties properties) {
    catalog = required(properties, "catalog");
    windowMillis = Long.parseLong(required(properties, "window.millis"));
    thresholdHundredths = Long.parseLong(required(properties, "coverage.threshold.hundredths"));
    for (int index = 0; index < metrics.length; index++) {
      String prefix = "metric." + Contribution.METRIC_IDS[index] + ".";
      metrics[index] = new Metric(required(properties, prefix + "version"), required(properties, prefix + "unit"), required(properties, prefix + "missing"), Long.parseLong(required(properties, prefix + "minimum.sample")));
    }
  }

  static String required(Properties properties, String name) {
    String value = properties.getProperty(name);
    if (value == null) throw new IllegalArgumentException("missing property " + name);
    return value;
  }
}
