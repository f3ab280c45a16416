package io.swapstream.aggregate.rollup.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The rollup stage: the final window rows of {@code etw.thread-stats}, regrouped by process name and by
 * host (a repartition each: a fleet's hosts sit on every partition), merged per window, to
 * {@code etw.process-stats} and {@code etw.host-stats}; and {@code etw.wake-edges}, kept for the query API. Each group's rows, every window of it, share a
 * partition (keys {@code name/windowStart}, partitioned by the name), so one instance answers for a name.
 */
public final class RollupTopology {
    private RollupTopology() {}

    /** A kind's stores: the groups, the windows, each host's progress, and the last closed windows' rows (queried). */
    record StoreNames(String groups, String windows, String hosts, String latest) {}

    public static final String PROCESS_ROWS_STORE = "rollup-process-rows";
    public static final String HOST_ROWS_STORE = "rollup-host-rows";
    /** The kept windows' wake edges, each host's record apart ({@link WakeEdgeRecorder}). */
    public static final String WAKE_EDGES_STORE = "rollup-wake-edges";
    static final StoreNames PROCESSES = new StoreNames("rollup-process-groups", "rollup-process-windows", "rollup-process-hosts",
            PROCESS_ROWS_STORE);
    static final StoreNames HOSTS = new StoreNames("rollup-host-groups", "rollup-host-windows", "rollup-host-hosts", HOST_ROWS_STORE);

    /** The key of a roll-up row on its topic: {@code name/windowStart}, the empty name for none. */
    public static String rowKey(String name, long windowStart) {
        return (name == null ? "" : name) + "/" + windowStart;
    }

    /** A window start as a key that sorts in time: the query stores' keys begin with it. */
    public static String windowKey(long start) {
        return RollupProcessor.windowKey(start);
    }

    /** The key of a roll-up row in its query store: its window, then its name. */
    public static String storeKey(String name, long windowStart) {
        return RollupProcessor.groupKey(windowStart, name);
    }

    /** @param control {@code run}'s end of input, or null for a service */
    public static void build(StreamsBuilder builder, RollupSettings settings, RollupControl control) {
        // the repartition topics and stores are the stage's own, read by nothing else: single-object encoding whatever
        // the topics use, so a registry sees only the topics' subjects and state reads back either way
        Serde<ThreadStats> rowSerde = new SingleObjectAvroSerde<>(ThreadStats.class);
        addStores(builder, PROCESSES, new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ProcessStats.class));
        addStores(builder, HOSTS, new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.HostStats.class));
        // only final window rows: a whole-session row's key ends with its thread, a window's with its start; and only
        // complete ones: a window past the time an incomplete session is known until would put numbers computed from
        // missing switches into the fleet's rows and metrics (docs/architecture.md "Incomplete sessions")
        KStream<String, ThreadStats> rows = builder.stream(settings.rows().name(), settings.rows().consumed())
                .filter((k, v) -> v != null && v.getFinal$() && v.getComplete() && k.endsWith("/" + v.getWindowStartNanos()),
                        Named.as("final-window-rows"))
                .mapValues(RollupGroup::slim, Named.as("slim-rows"));
        rows.selectKey((k, v) -> rowKey(RollupGroup.nameOf(RollupGroup.Kind.PROCESS, v), v.getWindowStartNanos()), Named.as("by-process-name"))
                .repartition(Repartitioned.<String, ThreadStats>as("by-process").withKeySerde(Serdes.String()).withValueSerde(rowSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()))
                .process(() -> new RollupProcessor<>(RollupGroup.Kind.PROCESS, PROCESSES, settings,
                                (g, name, start, end) -> g.toProcessStats(name, start, end, true), control, true),
                        Named.as("rollup-processes"), PROCESSES.groups(), PROCESSES.windows(), PROCESSES.hosts(), PROCESSES.latest())
                .to(settings.processes().name(), settings.processes().produced());
        rows.selectKey((k, v) -> rowKey(v.getHost(), v.getWindowStartNanos()), Named.as("by-host-name"))
                .repartition(Repartitioned.<String, ThreadStats>as("by-host").withKeySerde(Serdes.String()).withValueSerde(rowSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()))
                .process(() -> new RollupProcessor<>(RollupGroup.Kind.HOST, HOSTS, settings,
                                (g, name, start, end) -> g.toHostStats(name, start, end, true), control, false),
                        Named.as("rollup-hosts"), HOSTS.groups(), HOSTS.windows(), HOSTS.hosts(), HOSTS.latest())
                .to(settings.hosts().name(), settings.hosts().produced());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(WAKE_EDGES_STORE), Serdes.String(),
                new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.WakeEdge.class)));
        builder.stream(settings.wakeEdges().name(), settings.wakeEdges().consumed())
                .process(() -> new WakeEdgeRecorder(settings), Named.as("wake-edges"), WAKE_EDGES_STORE);
    }

    private static <V> void addStores(StreamsBuilder builder, StoreNames s, Serde<V> rowSerde) {
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.groups()), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.windows()), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.hosts()), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.latest()), Serdes.String(), rowSerde));
    }
}
