package agentops.peer;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams peer of `npm run bench:peer`: reads the engine-facts topic from its start and
 * keeps operational-token-usage and direct-evidence-basis-rate on a compacted results topic, as our
 * engine does for all fourteen metrics.
 *
 *   engine-facts → LedgerStep (store "units": one read, one write per record)
 *     → changed contributions, keyed by result key → repartition "contributions"
 *     → aggregate (store "groups", RocksDB, the record cache) → render → results topic
 *
 *   java -jar agentops-peer.jar peer.properties
 *
 * peer.properties: bootstrap.servers, application.id, state.dir, input.topic, output.topic,
 * input.last.offset, and the catalog/engine settings of PeerConfig. Any other key starting with
 * "streams." is passed to Kafka Streams without the prefix. SIGTERM closes the application
 * (committing offsets and flushing the results).
 */
public final class PeerApp {
  private PeerApp() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length != 1) throw new IllegalArgumentException("usage: java -jar agentops-peer.jar <peer.properties>");
    Properties settings = new Properties();
    try (InputStream in = new FileInputStream(args[0])) {
      settings.load(in);
    }
    PeerConfig config = new PeerConfig(settings);
    Progress progress = new Progress(Long.parseLong(PeerConfig.required(settings, "input.last.offset")));

    StreamsBuilder builder = new StreamsBuilder();
    builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(LedgerStep.UNITS), Serdes.String(), Serdes.ByteArray()).withCachingEnabled());
    builder.stream(PeerConfig.required(settings, "input.topic"), Consumed.with(Serdes.String(), Serdes.ByteArray()))
        .process(() -> new LedgerStep(config, progress), LedgerStep.UNITS)
        .groupByKey(Grouped.with("contributions", Serdes.String(), Contribution.deltaSerde()))
        .aggregate(GroupSums::new, (key, delta, sums) -> delta.contribution() == null ? sums : sums.apply(delta.contribution(), delta.sign()),
            Materialized.<String, GroupSums, KeyValueStore<Bytes, byte[]>>as("groups").withKeySerde(Serdes.String()).withValueSerde(GroupSums.serde()))
        .toStream()
        .filter((key, sums) -> {
          if (!key.equals(LedgerStep.END_KEY)) {
            progress.emitted();
            return true;
          }
          progress.endForwarded();
          return false;
        })
        .mapValues(sums -> ResultRender.render(sums, config))
        .to(PeerConfig.required(settings, "output.topic"), Produced.with(Serdes.String(), Serdes.String()));

    Properties streams = new Properties();
    streams.put(StreamsConfig.APPLICATION_ID_CONFIG, PeerConfig.required(settings, "application.id"));
    streams.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, PeerConfig.required(settings, "bootstrap.servers"));
    streams.put(StreamsConfig.STATE_DIR_CONFIG, PeerConfig.required(settings, "state.dir"));
    streams.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    streams.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    // The record cache forwards at each commit: once a second, as our engine publishes per batch.
    streams.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1_000);
    streams.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    for (String name : settings.stringPropertyNames()) if (name.startsWith("streams.")) streams.put(name.substring("streams.".length()), settings.getProperty(name));

    KafkaStreams application = new KafkaStreams(builder.build(), streams);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      application.close();
      stopped.countDown();
    }));
    application.setUncaughtExceptionHandler(error -> {
      error.printStackTrace();
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    // A failed stream thread ends the process with a non-zero code, so the bench stops at once instead of waiting for its timeout.
    application.setStateListener((next, previous) -> {
      if (next == KafkaStreams.State.ERROR) stopped.countDown();
    });
    application.start();
    System.out.println("{\"event\":\"started\"}");
    stopped.await();
    if (application.state() == KafkaStreams.State.ERROR) System.exit(1);
  }
}
