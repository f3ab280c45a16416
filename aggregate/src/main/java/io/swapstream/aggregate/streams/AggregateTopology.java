package io.swapstream.aggregate.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.decode.SwitchBatchSerde;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
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

/**
 * The aggregate stage: {@code etw.switch-batches} (with the thread records they carry) and
 * {@code etw.sessions} (both partitioned by session) to {@code etw.thread-stats}. One sub-topology, no repartition.
 * Its state ({@link AggregateStores}): each open session's progress, its threads' accumulators (whole session
 * and the open window) and labels, and its batches since the last flush. The latest emitted statistics are
 * queryable in the {@value #STATS_STORE} store.
 */
public final class AggregateTopology {
    private AggregateTopology() {}

    /** Each session's progress ({@code AggregateSession}), under the session's key: what queries read. */
    public static final String SESSIONS_STORE = "aggregate-sessions";
    /** Each thread's whole-session and open-window accumulators, as of its session's last flush. */
    public static final String ACCUMULATORS_STORE = "aggregate-accumulators";
    /** The batches each session took since its last flush, as offsets of the input topic. */
    public static final String REDO_STORE = "aggregate-redo";
    public static final String THREADS_STORE = "aggregate-threads";
    public static final String STATS_STORE = "thread-stats";
    /**
     * How often changed whole-session rows go out while a session runs, unless told: a row per
     * thread per interval is what a dashboard redraws, and on a busy host thousands of rows.
     */
    public static final long DEFAULT_EMIT_INTERVAL_MS = 10_000;

    /** What the aggregate has counted of a session: for queries. */
    public record SessionProgress(String host, long switches, long threads, boolean done, String endReason, long lateBatches) {}

    public static SessionProgress progress(byte[] sessionState) {
        AggregateSession s = AggregateSession.decode(sessionState);
        return new SessionProgress(s.host, s.switches, s.threads, s.done, s.endReason, s.lateBatches);
    }

    /** The switches counted for a session once all its statistics have been emitted final, else null. */
    public static Long finishedSwitches(byte[] sessionState) {
        if (sessionState == null) return null;
        AggregateSession s = AggregateSession.decode(sessionState);
        return s.done ? s.switches : null;
    }

    /**
     * The stats store's key of a window row: by session, then window (zero-padded, so keys sort in
     * time), then thread; a whole-session row's key is the topic's, {@code session/tid}.
     */
    public static String windowRowKey(String session, long windowStart, int tid) {
        return windowRowPrefix(session, windowStart) + tid;
    }

    public static String windowRowPrefix(String session, long windowStart) {
        // by hand, not String.format: a key per row emitted, and format's parsing was 3% of the aggregate thread
        if (windowStart < 0) return String.format("%s/w/%020d/", session, windowStart);
        String digits = Long.toString(windowStart);
        StringBuilder b = new StringBuilder(session.length() + 24).append(session).append("/w/");
        for (int i = digits.length(); i < 20; i++) b.append('0');
        return b.append(digits).append('/').toString();
    }

    /** The decode stage's latest {@code TraceSession} record of each session: for queries. */
    public static final String SESSION_RECORDS_STORE = "aggregate-session-records";

    /**
     * @param windowNanos    tumbling window (0: whole-session statistics only)
     * @param emitIntervalMs how often changed whole-session statistics are emitted before a session ends
     */
    public static void build(StreamsBuilder builder, Map<String, ?> config, long windowNanos, long emitIntervalMs) {
        build(builder, config, windowNanos, emitIntervalMs, new RowIndexes());
    }

    /** @param indexes where the tasks of this instance keep their row indexes, for the query API */
    public static void build(StreamsBuilder builder, Map<String, ?> config, long windowNanos, long emitIntervalMs, RowIndexes indexes) {
        AggregateSettings settings = AggregateSettings.from(config, windowNanos, emitIntervalMs);
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        AggregateStores.addTo(builder, serdes, config);
        // batches come in as bytes: the processor notes where each sits (redo) as well as reading it
        KStream<String, Object> batches = builder.stream(settings.batchTopic(), Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .mapValues(v -> (Object) v, Named.as("batch-in"));
        KStream<String, Object> sessions = builder.stream(topic(config, SwapstreamConfig.SESSIONS),
                Consumed.with(Serdes.String(), serdes.serde(TraceSession.class, config))).mapValues(v -> (Object) v, Named.as("session-in"));
        batches.merge(sessions)
                .process(() -> new AggregateProcessor(settings, SwitchBatchSerde.forConfig(config).deserializer(), indexes),
                        Named.as("aggregate"), SESSIONS_STORE, ACCUMULATORS_STORE, REDO_STORE, THREADS_STORE, STATS_STORE, SESSION_RECORDS_STORE)
                .to(settings.statsTopic(), Produced.with(Serdes.String(), serdes.serde(ThreadStats.class, config)).withStreamPartitioner(new SessionPartitioner<>()));
    }
}
