package io.swapstream.local;

import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.rollup.streams.RollupControl;
import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.aggregate.streams.AggregateSettings;
import io.swapstream.aggregate.streams.AggregateTopology;
import io.swapstream.aggregate.streams.RowIndexes;
import io.swapstream.decode.streams.DecodeSettings;
import io.swapstream.decode.streams.DecodeTopology;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** Builds and runs the two stages' Kafka Streams instances. */
public final class Pipeline implements AutoCloseable {
    public final KafkaStreams decode;
    public final KafkaStreams aggregate;
    /** The aggregate's row indexes, for a query API over it. */
    public final RowIndexes indexes;

    Pipeline(KafkaStreams decode, KafkaStreams aggregate, RowIndexes indexes) {
        this.decode = decode;
        this.aggregate = aggregate;
        this.indexes = indexes;
    }

    public static Topology decodeTopology(Properties config) {
        StreamsBuilder b = new StreamsBuilder();
        DecodeTopology.build(b, DecodeSettings.from(StageConfig.asMap(config)));
        return b.build(config);
    }

    public static Topology rollupTopology(Properties config, RollupControl control) {
        StreamsBuilder b = new StreamsBuilder();
        RollupTopology.build(b, RollupSettings.from(StageConfig.asMap(config)), control);
        return b.build(config);
    }

    /** The aggregate's topology; its window and emit interval are in {@code config} ({@link #aggregateSettings}). */
    public static Topology aggregateTopology(Properties config, RowIndexes indexes) {
        StreamsBuilder b = new StreamsBuilder();
        AggregateTopology.build(b, AggregateSettings.from(StageConfig.asMap(config)), indexes);
        return b.build(config);
    }

    /** The aggregate's window and emit interval, as its configuration says them. */
    public static Map<String, String> aggregateSettings(long windowNanos, long emitIntervalMs) {
        return Map.of(SwapstreamConfig.AGGREGATE_WINDOW_NANOS, String.valueOf(windowNanos),
                SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS, String.valueOf(emitIntervalMs));
    }

    /**
     * Starts both stages against {@code bootstrap}, state under {@code stateDir}, once their
     * changelog topics exist.
     *
     * @param partitions the partition count of the pipeline's topics (TopicSetup.ensure)
     */
    public static Pipeline start(String bootstrap, String appId, Path stateDir, String prefix, int partitions, short replication,
                          long windowNanos, long emitIntervalMs, Map<String, String> overrides)
            throws InterruptedException, ExecutionException {
        Properties d = StageConfig.streams(StageConfig.DECODE, bootstrap, appId, stateDir.resolve("decode"), prefix,
                replication, overrides);
        Map<String, String> aggregateOverrides = new HashMap<>(overrides);
        aggregateOverrides.putAll(aggregateSettings(windowNanos, emitIntervalMs));
        Properties a = StageConfig.streams(StageConfig.AGGREGATE, bootstrap, appId, stateDir.resolve("aggregate"), prefix,
                replication, aggregateOverrides);
        Topology decodeTopology = decodeTopology(d);
        RowIndexes indexes = new RowIndexes();
        Topology aggregateTopology = aggregateTopology(a, indexes);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            StageConfig.createChangelogs(admin, decodeTopology, d, partitions);
            StageConfig.createChangelogs(admin, aggregateTopology, a, partitions);
        }
        KafkaStreams decode = new KafkaStreams(decodeTopology, d);
        KafkaStreams aggregate = new KafkaStreams(aggregateTopology, a);
        decode.start();
        aggregate.start();
        return new Pipeline(decode, aggregate, indexes);
    }

    /**
     * Asks the broker for the group and transaction coordinators of the stages of {@code appId}, without waiting:
     * on a new broker the first such question creates its offsets and transaction-state topics, which the
     * stages' first join and first transaction otherwise wait for.
     * Asked first, that overlaps the topics' creation.
     */
    public static KafkaFuture<Void> findCoordinators(Admin admin, String appId) {
        String group = StageConfig.applicationId(appId, StageConfig.DECODE);
        return KafkaFuture.allOf(admin.describeConsumerGroups(List.of(group)).all(),
                admin.describeTransactions(List.of(group)).all());
    }

    /** Waits for {@link #findCoordinators}; what they answer does not matter (the transactional id is new: not found). */
    public static void awaitCoordinators(KafkaFuture<Void> coordinators) throws InterruptedException {
        try {
            coordinators.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // the stages find the coordinators themselves and report what stops them
        }
    }

    /** Waits until both stages are RUNNING (their groups joined, their tasks assigned and restored). */
    public void awaitRunning(long deadlineNanos) throws InterruptedException {
        while (decode.state() != KafkaStreams.State.RUNNING || aggregate.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > deadlineNanos) throw new ServiceException("the stages were not running within --timeout");
            Thread.sleep(10);
        }
    }

    /** Waits until the decode stage has ended the session; fails with one line when a stage stops or {@code deadline} passes. */
    public void awaitDecoded(String session, long deadlineNanos) throws InterruptedException {
        while (!DecodeTopology.hasEnded(query(decode, DecodeTopology.PROGRESS_STORE, session))) awaitAlive(session, deadlineNanos);
    }

    /** Waits until the aggregate stage has given all of a session's statistics; returns its switch count. */
    public long awaitAggregated(String session, long deadlineNanos) throws InterruptedException {
        Long n;
        while ((n = AggregateTopology.finishedSwitches(query(aggregate, AggregateTopology.SESSIONS_STORE, session))) == null) {
            awaitAlive(session, deadlineNanos);
        }
        return n;
    }

    /** The session's value in the store, null while the stage is starting or rebalancing (asked again). */
    private static byte[] query(KafkaStreams streams, String store, String session) {
        try {
            return streams.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.<String, byte[]>keyValueStore())).get(session);
        } catch (InvalidStateStoreException e) {
            return null;
        }
    }

    private void awaitAlive(String session, long deadlineNanos) throws InterruptedException {
        for (KafkaStreams s : List.of(decode, aggregate)) {
            if (stopped(s)) throw new ServiceException("a pipeline stage stopped (" + s.state() + ") before session " + session + " was done");
        }
        if (System.nanoTime() > deadlineNanos) throw new ServiceException("session " + session + " was not fully processed within --timeout");
        Thread.sleep(100);
    }

    /** How many whole-session rows of the session the aggregate's store holds. */
    public static int wholeSessionRows(KafkaStreams aggregate, String session) {
        ReadOnlyKeyValueStore<String, ThreadStats> store = aggregate.store(
                StoreQueryParameters.fromNameAndType(AggregateTopology.STATS_STORE, QueryableStoreTypes.keyValueStore()));
        int n = 0;
        try (KeyValueIterator<String, ThreadStats> it = store.prefixScan(session + "/", new StringSerializer())) {
            while (it.hasNext()) if (it.next().key.split("/").length == 2) n++;
        }
        return n;
    }

    /** What {@link #readFinalRows} gives each final row to. */
    @FunctionalInterface
    public interface FinalRows {
        /** @param wholeSession a whole-session row, else a window's */
        void row(ThreadStats row, boolean wholeSession);
    }

    /** Whether a stage has stopped for good (its stream threads failed or it was shut down). */
    public static boolean stopped(KafkaStreams streams) {
        KafkaStreams.State s = streams.state();
        return s == KafkaStreams.State.ERROR || s == KafkaStreams.State.PENDING_ERROR || s == KafkaStreams.State.NOT_RUNNING
                || s == KafkaStreams.State.PENDING_SHUTDOWN;
    }

    /**
     * Reads the rows topic back, committed, from its start, and gives {@code each} every final row of
     * the sessions in {@code wholeRowsDue}, until each session's final whole-session rows (as many as
     * its count) have come: they commit in the transaction that ends the session, with its last
     * windows. Fails with one line when the aggregate stage stops first or {@code deadline} passes.
     */
    public static void readFinalRows(Map<String, Object> consumerConfig, String prefix, Map<String, Integer> wholeRowsDue,
                              KafkaStreams aggregate, long deadline, FinalRows each) {
        Map<String, Integer> due = new HashMap<>(wholeRowsDue);
        Map<String, Object> c = new HashMap<>(consumerConfig);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.THREAD_STATS);
        Map<String, Object> serdeConfig = new HashMap<>(consumerConfig);
        serdeConfig.put(SwapstreamConfig.TOPIC_PREFIX, prefix);
        try (KafkaConsumer<String, ThreadStats> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                RecordSerdeFactory.from(serdeConfig).serde(ThreadStats.class, serdeConfig).deserializer())) {
            consumer.assign(consumer.partitionsFor(topic).stream().map(i -> new TopicPartition(topic, i.partition())).toList());
            while (due.values().stream().anyMatch(n -> n > 0)) {
                if (System.nanoTime() > deadline) throw new ServiceException("the final rows were not all committed within --timeout");
                if (stopped(aggregate)) {
                    throw new ServiceException("the aggregate stage stopped (" + aggregate.state() + ") before its final rows were committed");
                }
                for (ConsumerRecord<String, ThreadStats> r : consumer.poll(Duration.ofMillis(200))) {
                    ThreadStats t = r.value();
                    String session = t.getSession().toString();
                    if (!due.containsKey(session) || !t.getFinal$()) continue;
                    boolean whole = r.key().equals(ThreadStatsFields.key(session, t.getThreadId(), null));
                    if (whole) due.merge(session, -1, Integer::sum);
                    each.row(t, whole);
                }
            }
        }
    }

    /** When each stage was done, in seconds from the start of ingest, and what went through Kafka. */
    public record Times(double ingested, double decoded, double aggregated, long rawRecords, long rawBytes, long batchRecords,
                 long batchBytes, double decodeCpuSecs, double aggregateCpuSecs, JvmCpu jvm) {}

    @Override
    public void close() {
        // leave the group so a restarted instance is not held up by the old member's session timeout
        CloseOptions leave = CloseOptions.timeout(Duration.ofSeconds(30))
                .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP);
        // side by side: each close mostly waits (its threads' last polls and commits, RocksDB's flushes); a thread
        // of its own, not the common pool, whose one worker on 2 cores anything else queued there would hold up
        Thread decodeClose = new Thread(() -> decode.close(leave), "swapstream-close-decode");
        decodeClose.start();
        aggregate.close(leave);
        try {
            decodeClose.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
