package io.swapstream.local;

import io.swapstream.ingest.TopicSetup;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.stage.SmallStoreRocksDbConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;

/** Kafka Streams configuration of the decode and aggregate stages. */
public final class StageConfig {
    private StageConfig() {}

    public static final String DECODE = "decode";
    public static final String AGGREGATE = "aggregate";
    public static final String ROLLUP = "rollup";
    /**
     * The stages' producers do not compress: the producer compresses on send, in the stream threads,
     * which then decode and aggregate less (docs/performance.md, "Compression"). Where network or disk
     * is dearer than stage CPU, {@code producer.compression.type=lz4} in {@code --client-config} turns it on.
     */
    public static final String COMPRESSION = "none";

    /**
     * A stage instance's lasting id in its consumer group when none is given: the stage, this machine's
     * name and a digest of its state directory, the same at every restart and different for two
     * instances on one machine (they need state directories of their own anyway).
     */
    public static String instanceId(String stage, Path stateDir) {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        String dir = stateDir.toAbsolutePath().normalize().toString();
        java.util.UUID digest = java.util.UUID.nameUUIDFromBytes(dir.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return stage + "-" + host + "-" + digest.toString().substring(0, 8);
    }

    /** A stage's application id, which is also its consumer group's id. */
    public static String applicationId(String appIdBase, String stage) {
        return appIdBase + "-" + stage;
    }

    /**
     * @param stage      {@link #DECODE} or {@link #AGGREGATE}
     * @param appIdBase  application id prefix (the stage name is appended), unique per pipeline
     * @param overrides  any further Kafka Streams or swapstream keys, applied last
     */
    public static Properties streams(String stage, String bootstrap, String appIdBase, Path stateDir, String prefix,
                              short replication, Map<String, String> overrides) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId(appIdBase, stage));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) replication);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 16L * 1024 * 1024);
        p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SmallStoreRocksDbConfig.class);
        p.put(SwapstreamConfig.TOPIC_PREFIX, prefix);
        // raw buffers of a MiB and more pass through the decode stage and its store changelog
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), SwapstreamConfig.MAX_MESSAGE_BYTES);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 512 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), COMPRESSION);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), stage.equals(DECODE) ? 50 : 500);
        // bounded memory: records of 64 KiB and more each, so Kafka's defaults (1000 records buffered
        // per partition, 32 MiB per producer) alone exceed a small heap; a record larger than a
        // fetch's limit still comes whole
        p.put(StreamsConfig.BUFFERED_RECORDS_PER_PARTITION_CONFIG, 32);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), 2 * 1024 * 1024);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_BYTES_CONFIG), 8 * 1024 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BUFFER_MEMORY_CONFIG), 16L * 1024 * 1024);
        // each commit ends a transaction: every second, not every 100 ms
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        // a task is not processed until its changelogs are restored, and a restore round whose fetch finds nothing
        // new waits the broker's fetch.max.wait.ms, for each of a starting stage's tasks: an idle restore consumer
        // asks more often
        p.put(StreamsConfig.restoreConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 50);
        // a consumer's close sends its fetch session's end on the connection where its last fetch waits for data
        // (the broker answers a connection's requests in order), so a stage's close waits out that fetch. Records
        // that are there come at once whatever the wait.
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 100);
        // a record its topic's deserializer refuses is logged with its offset and skipped: a task that stopped on it
        // would meet it again at every restart (the processors skip what they cannot take the same way)
        p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
        p.putAll(overrides);
        return p;
    }

    /**
     * With a schema registry in {@code config}: registers the current schema of every record topic, so that a
     * refusal stops a stage before it writes anything. The registry, or null without one.
     */
    public static io.swapstream.schemas.serde.SchemaRegistry registerSchemas(Map<String, ?> config, String prefix) {
        io.swapstream.schemas.serde.SchemaRegistry registry = io.swapstream.schemas.serde.SchemaRegistry.of(config);
        if (registry != null) registry.registerTopics(prefix);
        return registry;
    }

    /**
     * Creates the changelog topics of {@code topology}'s stores (all of them are logged) before the
     * stage starts, so its first writes do not race their creation; see TopicSetup.ensureChangelogs.
     */
    public static void createChangelogs(Admin admin, Topology topology, Properties config, int partitions)
            throws InterruptedException, ExecutionException {
        Set<String> stores = new TreeSet<>();
        for (TopologyDescription.Subtopology sub : topology.describe().subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node instanceof TopologyDescription.Processor p) stores.addAll(p.stores());
            }
        }
        short replication = Short.parseShort(config.get(StreamsConfig.REPLICATION_FACTOR_CONFIG).toString());
        TopicSetup.ensureChangelogs(admin, config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG), stores, partitions, replication);
    }

    public static Map<String, Object> asMap(Properties p) {
        Map<String, Object> m = new HashMap<>();
        p.forEach((k, v) -> m.put(k.toString(), v));
        return m;
    }

    /** Three copies on a cluster of three or more brokers, as many as there are on a smaller one. */
    public static short defaultReplication(int brokers) {
        return (short) Math.max(1, Math.min(3, brokers));
    }
}
