package agentops.examples;

import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import io.apicurio.registry.serde.config.SerdeConfig;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads agentops-stream's compacted results topic from the beginning to its current end and prints
 * the latest result of every live key as a tab-separated table (docs/consumers.md).
 *
 * <p>Keys are UTF-8 strings (canonical JSON of metric_id, scope and cohort); values are Avro
 * {@code agentops.v1.MetricResult} records in the Confluent wire format, decoded here by the
 * Apicurio serde against the registry's native API. A record with a null value is a tombstone:
 * the key no longer exists.
 */
public final class ResultsTable {

  private static final String USAGE = String.join("\n",
      "Usage: java -jar target/results-table.jar [--brokers HOST:PORT,...] [--registry URL] [--topic NAME]",
      "                                          [--config FILE] [--timeout-seconds N]",
      "",
      "  --brokers          Kafka bootstrap servers (env KAFKA_BROKERS; default 127.0.0.1:19092)",
      "  --registry         Apicurio Registry native API root, .../apis/registry/v3",
      "                     (env APICURIO_REGISTRY_URL; default http://127.0.0.1:18081/apis/registry/v3)",
      "  --topic            results topic (env RESULTS_TOPIC; default agentops.metric-results.v1)",
      "  --config           a Kafka client properties file merged in (security.protocol, sasl.*, ssl.*)",
      "  --timeout-seconds  give up reading to the end after this long (default 60)",
      "",
      "Prints one line per live result: key, metric_id, scope, cohort, status, value, as_of.");

  /** Timestamps as the project's JSON form writes them: ISO-8601, UTC, always three fraction digits. */
  private static final DateTimeFormatter ISO_MILLIS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private ResultsTable() {}

  public static void main(String[] args) {
    Map<String, String> options;
    try {
      options = parseArguments(args);
    } catch (IllegalArgumentException error) {
      System.err.println("results-table: " + error.getMessage() + "\n\n" + USAGE);
      System.exit(2);
      return;
    }
    if (options.containsKey("help")) {
      System.out.println(USAGE);
      return;
    }
    String brokers = option(options, "brokers", "KAFKA_BROKERS", "127.0.0.1:19092");
    String registry = option(options, "registry", "APICURIO_REGISTRY_URL", "http://127.0.0.1:18081/apis/registry/v3").replaceAll("/+$", "");
    String topic = option(options, "topic", "RESULTS_TOPIC", "agentops.metric-results.v1");
    if (registry.contains("/apis/ccompat/")) {
      // The Confluent-compatible address is what the Node processor and Confluent clients use; the
      // Apicurio serde calls the native API and gets 404 there.
      System.err.println("results-table: --registry " + registry + " is Apicurio's Confluent-compatible API; the Apicurio serde needs the native one: "
          + registry.replaceAll("/apis/ccompat/.*$", "/apis/registry/v3"));
      System.exit(2);
      return;
    }
    try {
      long timeoutSeconds = Long.parseLong(options.getOrDefault("timeout-seconds", "60"));
      Properties properties = consumerProperties(brokers, registry, options.get("config"));
      Map<String, GenericRecord> latest = readLatest(properties, topic, Duration.ofSeconds(timeoutSeconds));
      printTable(latest, new PrintStream(System.out, true, StandardCharsets.UTF_8));
      System.err.println(latest.size() + " results on " + topic);
    } catch (NumberFormatException error) {
      System.err.println("results-table: --timeout-seconds must be a whole number of seconds, e.g. --timeout-seconds 60");
      System.exit(2);
    } catch (Exception error) {
      System.err.println("results-table: " + error.getMessage());
      System.exit(1);
    }
  }

  static Properties consumerProperties(String brokers, String registry, String configFile) throws IOException {
    Properties properties = new Properties();
    if (configFile != null) {
      try (InputStream in = new FileInputStream(configFile)) {
        properties.load(in);
      }
    }
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "agentops-results-table-java");
    // No group: the table is a snapshot read with assign(), nothing is committed.
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, AvroKafkaDeserializer.class.getName());
    properties.put(SerdeConfig.REGISTRY_URL, registry);
    // The 4-byte id after the magic byte is what the Confluent-compatible API returned on
    // registration, which Apicurio 3 makes the contentId (3.x's default, said here on purpose:
    // Apicurio 2.x serdes read an 8-byte globalId).
    properties.put(SerdeConfig.USE_ID, "contentId");
    return properties;
  }

  /** Latest value per key from the beginning to the end offsets seen at start; tombstones remove. */
  static Map<String, GenericRecord> readLatest(Properties properties, String topic, Duration timeout) {
    Map<String, GenericRecord> latest = new HashMap<>();
    try (KafkaConsumer<String, GenericRecord> consumer = new KafkaConsumer<>(properties)) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
      if (infos == null || infos.isEmpty()) throw new IllegalStateException("topic " + topic + " not found on " + properties.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG));
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : infos) partitions.add(new TopicPartition(topic, info.partition()));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
      long deadline = System.nanoTime() + timeout.toNanos();
      while (partitions.stream().anyMatch(partition -> consumer.position(partition) < end.get(partition))) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("did not reach the end of " + topic + " within " + timeout.toSeconds() + " s");
        for (ConsumerRecord<String, GenericRecord> record : consumer.poll(Duration.ofMillis(500))) {
          if (record.offset() >= end.get(new TopicPartition(record.topic(), record.partition()))) continue;
          if (record.key() == null) continue;
          if (record.value() == null) latest.remove(record.key());
          else latest.put(record.key(), record.value());
        }
      }
    }
    return latest;
  }

  static void printTable(Map<String, GenericRecord> latest, PrintStream out) {
    out.println("key\tmetric_id\tscope\tcohort\tstatus\tvalue\tas_of");
    List<String> keys = new ArrayList<>(latest.keySet());
    // The order `agentops results` prints: by the keys' UTF-8 bytes.
    keys.sort((left, right) -> Arrays.compareUnsigned(left.getBytes(StandardCharsets.UTF_8), right.getBytes(StandardCharsets.UTF_8)));
    for (String key : keys) {
      GenericRecord result = latest.get(key);
      out.println(String.join("\t", key, result.get("metric_id").toString(), json(scope((GenericRecord) result.get("scope"))), json(stringMap((Map<?, ?>) result.get("cohort"))),
          result.get("status").toString(), json(value(result.get("value"))), json(timestamp(result.get("as_of")))));
    }
  }

  /**
   * The scope union: the branch's record name (WindowScope or SnapshotScope) and its `kind` field
   * say which it is. Both carry timestamp-millis longs, shown as ISO-8601 text.
   */
  static Map<String, Object> scope(GenericRecord scope) {
    Map<String, Object> fields = new TreeMap<>();
    String kind = scope.get("kind").toString();
    fields.put("kind", kind);
    if (kind.equals("window")) {
      fields.put("start", timestamp(scope.get("start")));
      fields.put("end", timestamp(scope.get("end")));
    } else {
      fields.put("snapshot_id", scope.get("snapshot_id").toString());
      fields.put("cutoff", timestamp(scope.get("cutoff")));
    }
    return fields;
  }

  /**
   * Avro maps decode with org.apache.avro.util.Utf8 keys (and string values), so a lookup by a
   * java.lang.String finds nothing: convert before use.
   */
  static Map<String, Object> stringMap(Map<?, ?> map) {
    Map<String, Object> converted = new TreeMap<>();
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      Object value = entry.getValue();
      converted.put(entry.getKey().toString(), value instanceof CharSequence ? value.toString() : value);
    }
    return converted;
  }

  /** value is a union of null, double and map of double (per-category rates). */
  static Object value(Object value) {
    if (value instanceof Map<?, ?> map) return stringMap(map);
    return value;
  }

  /** timestamp-millis arrives as a long (or an Instant when logical-type conversions are on). */
  static String timestamp(Object value) {
    if (value == null) return null;
    long millis = value instanceof Instant instant ? instant.toEpochMilli() : ((Number) value).longValue();
    return ISO_MILLIS.format(Instant.ofEpochMilli(millis));
  }

  /** JSON text of null, strings, numbers, booleans and string-keyed maps (keys already sorted). */
  static String json(Object value) {
    StringBuilder out = new StringBuilder();
    appendJson(out, value);
    return out.toString();
  }

  private static void appendJson(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof CharSequence text) {
      out.append('"');
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
          }
        }
      }
      out.append('"');
    } else if (value instanceof Double number) {
      if (number.isNaN() || number.isInfinite()) throw new IllegalStateException("a result value is " + number + ", which JSON cannot carry");
      // Whole numbers without ".0", as JSON.stringify writes them.
      out.append(number == Math.rint(number) && Math.abs(number) < 1e15 ? Long.toString(number.longValue()) : number.toString());
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        if (!first) out.append(',');
        first = false;
        appendJson(out, entry.getKey().toString());
        out.append(':');
        appendJson(out, entry.getValue());
      }
      out.append('}');
    } else {
      throw new IllegalStateException("cannot write " + value.getClass().getName() + " as JSON");
    }
  }

  private static Map<String, String> parseArguments(String[] args) {
    Map<String, String> options = new HashMap<>();
    List<String> known = List.of("brokers", "registry", "topic", "config", "timeout-seconds");
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        options.put("help", "");
        continue;
      }
      String name = arg.startsWith("--") ? arg.substring(2) : "";
      if (!known.contains(name)) throw new IllegalArgumentException("unknown argument " + arg);
      if (i + 1 >= args.length) throw new IllegalArgumentException(arg + " needs a value");
      options.put(name, args[++i]);
    }
    return options;
  }

  private static String option(Map<String, String> options, String name, String environment, String fallback) {
    String value = options.get(name);
    if (value == null || value.isEmpty()) value = System.getenv(environment);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
