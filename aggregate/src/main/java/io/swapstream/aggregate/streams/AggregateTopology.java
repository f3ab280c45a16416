package io.swapstream.aggregate.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The aggregate stage: {@code etw.context-switches}, {@code etw.threads} and {@code etw.sessions}
 * (all partitioned by session) to {@code etw.thread-stats}. One sub-topology, no repartition.
 * The latest emitted statistics are queryable in the {@value #STATS_STORE} store.
 */
public final class AggregateTopology {
    private AggregateTopology() {}

    public static final String ACCUMULATORS_STORE = "aggregate-accumulators";
    public static final String PROGRESS_STORE = "aggregate-progress";
    public static final String THREADS_STORE = "aggregate-threads";
    public static final String STATS_STORE = "thread-stats";
    /** Session id → switches counted, once all of the session's statistics have been emitted. */
    public static final String DONE_STORE = "aggregate-done";

    static final WriteBackStore.Codec<ThreadStatsAccumulator> ACCUMULATOR_CODEC = new WriteBackStore.Codec<>() {
        @Override
        public byte[] encode(ThreadStatsAccumulator value) { return AccumulatorCodec.encode(value); }

        @Override
        public ThreadStatsAccumulator decode(byte[] bytes) { return AccumulatorCodec.decode(bytes); }

        @Override
        public ThreadStatsAccumulator empty() { return new ThreadStatsAccumulator(); }
    };

    /**
     * @param windowNanos   tumbling window (0: whole-session statistics only)
     * @param emitIntervalMs how often changed statistics are emitted before a session completes
     */
    public static void build(StreamsBuilder builder, Map<String, ?> config, long windowNanos, long emitIntervalMs) {
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        builder.addStateStore(new WriteBackStoreBuilder<>(ACCUMULATORS_STORE, ACCUMULATOR_CODEC));
        builder.addStateStore(new WriteBackStoreBuilder<>(PROGRESS_STORE, AggregateProgress.CODEC));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(THREADS_STORE), Serdes.String(),
                serdes.serde(ThreadInfo.class, config)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STATS_STORE), Serdes.String(),
                serdes.serde(ThreadStats.class, config)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(DONE_STORE), Serdes.String(),
                Serdes.Long()));
        KStream<String, Object> switches = builder.stream(topic(config, SwapstreamConfig.CONTEXT_SWITCHES),
                Consumed.with(Serdes.String(), serdes.serde(ContextSwitch.class, config))).mapValues(v -> (Object) v);
        KStream<String, Object> threads = builder.stream(topic(config, SwapstreamConfig.THREADS),
                Consumed.with(Serdes.String(), serdes.serde(ThreadInfo.class, config))).mapValues(v -> (Object) v);
        KStream<String, Object> sessions = builder.stream(topic(config, SwapstreamConfig.SESSIONS),
                Consumed.with(Serdes.String(), serdes.serde(TraceSession.class, config))).mapValues(v -> (Object) v);
        switches.merge(threads).merge(sessions)
                .process(() -> new AggregateProcessor(windowNanos, emitIntervalMs), Named.as("aggregate"),
                        ACCUMULATORS_STORE, PROGRESS_STORE, THREADS_STORE, STATS_STORE, DONE_STORE)
                .to(topic(config, SwapstreamConfig.THREAD_STATS), Produced.with(Serdes.String(),
                        serdes.serde(ThreadStats.class, config)).withStreamPartitioner(new SessionPartitioner<>()));
    }
}
