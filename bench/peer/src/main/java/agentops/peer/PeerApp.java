package agentops.peer;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams reference of issue #13: reads the engine-facts topic from its start and keeps
 * operational-token-usage and direct-evidence-basis-rate on a compacted results topic, as our
 * engine does for all fourteen metrics.
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

    Topology topology = new Topology();
    topology.addSource("engine-facts", Serdes.String().deserializer(), Serdes.ByteArray().deserializer(), PeerConfig.required(settings, "input.topic"));
    topology.addProcessor("ledger", () -> new LedgerProcessor(config, progress), "engine-facts");
    for (String name : new String[] {LedgerProcessor.FACT_VERSIONS, LedgerProcessor.UNITS, LedgerProcessor.COSTS_BY_CALL, LedgerProcessor.CONTRIBUTIONS, LedgerProcessor.GROUPS}) {
      topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.ByteArray()).withCachingEnabled(), "ledger");
    }
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(LedgerProcessor.GROUP_AS_OF), Serdes.Bytes(), Serdes.Long()).withCachingEnabled(), "ledger");
    topology.addSink("results", PeerConfig.required(settings, "output.topic"), Serdes.String().serializer(), Serdes.String().serializer(), "ledger");

    Properties streams = new Properties();
    streams.put(StreamsConfig.APPLICATION_ID_CONFIG, PeerConfig.required(settings, "application.id"));
    streams.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, PeerConfig.required(settings, "bootstrap.servers"));
    streams.put(StreamsConfig.STATE_DIR_CONFIG, PeerConfig.required(settings, "state.dir"));
    streams.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    streams.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    streams.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    for (String name : settings.stringPropertyNames()) if (name.startsWith("streams.")) streams.put(name.substring("streams.".length()), settings.getProperty(name));

    KafkaStreams application = new KafkaStreams(topology, streams);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      application.close();
      stopped.countDown();
    }));
    application.setUncaughtExceptionHandler(error -> {
      error.printStackTrace();
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    application.start();
    System.out.println("{\"event\":\"started\"}");
    stopped.await();
  }
}
