package io.swapstream.aggregate.fleet.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.aggregate.fleet.FleetGroup;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.util.Map;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The rollup stage: the final window rows of {@code etw.thread-stats}, regrouped by process name and by
 * host (a repartition each: a fleet's hosts sit on every partition), merged per window, to
 * {@code etw.process-stats} and {@code etw.host-stats}. Each group's rows, every window of it, share a
 * partition (keys {@code name/windowStart}, partitioned by the name), so one instance answers for a name.
 */
public final class RollupTopology {
    private RollupTopology() {}

    /** A kind's stores: the open groups, the windows, and the last closed windows' rows (queried). */
    record StoreNames(String groups, String windows, String latest) {}

    public static final String PROCESS_ROWS_STORE = "rollup-process-rows";
    public static final String HOST_ROWS_STORE = "rollup-host-rows";
    static final StoreNames PROCESSES = new StoreNames("rollup-process-groups", "rollup-process-windows", PROCESS_ROWS_STORE);
    static final StoreNames HOSTS = new StoreNames("rollup-host-groups", "rollup-host-windows", HOST_ROWS_STORE);

    /** The key of a roll-up row on its topic: {@code name/windowStart}, the empty name for none. */
    public static String rowKey(String name, long windowStart) {
        return (name == null ? "" : name) + "/" + windowStart;
    }

    /** The key of a roll-up row in its query store: its window, then its name. */
    public static String storeKey(String name, long windowStart) {
        return RollupProcessor.groupKey(windowStart, name);
    }

    public static void build(StreamsBuilder builder, Map<String, ?> config) {
        build(builder, config, null);
    }

    /** @param control {@code run}'s end of input, or null for a service */
    public static void build(StreamsBuilder builder, Map<String, ?> config, RollupControl control) {
        long graceMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.ROLLUP_GRACE_MS, SwapstreamConfig.DEFAULT_ROLLUP_GRACE_MS);
        int keep = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.ROLLUP_KEEP_WINDOWS, SwapstreamConfig.DEFAULT_ROLLUP_KEEP_WINDOWS);
        if (graceMs < 1) throw new IllegalArgumentException(SwapstreamConfig.ROLLUP_GRACE_MS + " must be at least 1");
        if (keep < 1) throw new IllegalArgumentException(SwapstreamConfig.ROLLUP_KEEP_WINDOWS + " must be at least 1");
        long retentionMs = SwapstreamConfig.sessionRetentionMs(config);
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        Serde<ThreadStats> rowSerde = serdes.serde(ThreadStats.class, config);
        Serde<ProcessStats> processSerde = serdes.serde(ProcessStats.class, config);
        Serde<HostStats> hostSerde = serdes.serde(HostStats.class, config);
        addStores(builder, PROCESSES, processSerde);
        addStores(builder, HOSTS, hostSerde);
        // only final window rows: a whole-session row's key ends with its thread, a window's with its start
        KStream<String, ThreadStats> rows = builder.stream(topic(config, SwapstreamConfig.THREAD_STATS), Consumed.with(Serdes.String(), rowSerde))
                .filter((k, v) -> v != null && v.getFinal$() && k.endsWith("/" + v.getWindowStartNanos()), Named.as("final-window-rows"))
                .mapValues(FleetGroup::slim, Named.as("slim-rows"));
        rows.selectKey((k, v) -> rowKey(FleetGroup.nameOf(FleetGroup.Kind.PROCESS, v), v.getWindowStartNanos()), Named.as("by-process-name"))
                .repartition(Repartitioned.<String, ThreadStats>as("by-process").withKeySerde(Serdes.String()).withValueSerde(rowSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()))
                .process(() -> new RollupProcessor<>(FleetGroup.Kind.PROCESS, PROCESSES, graceMs, keep, retentionMs,
                                (g, name, start, end) -> g.toProcessStats(name, start, end, true), control),
                        Named.as("rollup-processes"), PROCESSES.groups(), PROCESSES.windows(), PROCESSES.latest())
                .to(topic(config, SwapstreamConfig.PROCESS_STATS), Produced.with(Serdes.String(), processSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()));
        rows.selectKey((k, v) -> rowKey(v.getHost(), v.getWindowStartNanos()), Named.as("by-host-name"))
                .repartition(Repartitioned.<String, ThreadStats>as("by-host").withKeySerde(Serdes.String()).withValueSerde(rowSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()))
                .process(() -> new RollupProcessor<>(FleetGroup.Kind.HOST, HOSTS, graceMs, keep, retentionMs,
                                (g, name, start, end) -> g.toHostStats(name, start, end, true), control),
                        Named.as("rollup-hosts"), HOSTS.groups(), HOSTS.windows(), HOSTS.latest())
                .to(topic(config, SwapstreamConfig.HOST_STATS), Produced.with(Serdes.String(), hostSerde)
                        .withStreamPartitioner(new SessionPartitioner<>()));
    }

    private static <V> void addStores(StreamsBuilder builder, StoreNames s, Serde<V> rowSerde) {
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.groups()), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.windows()), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(s.latest()), Serdes.String(), rowSerde));
    }
}
