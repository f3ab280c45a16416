package io.swapstream.aggregate.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.avro.WakeEdge;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;

/**
 * The aggregate stage: {@code etw.switch-batches} (with the thread records they carry) and
 * {@code etw.sessions} (both partitioned by session) to {@code etw.thread-stats}, and each closed window's
 * wake edges to {@code etw.wake-edges}. One sub-topology, no repartition.
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
        // by hand, not String.format: a key per row emitted, and format parses its pattern every time
        if (windowStart < 0) return String.format("%s/w/%020d/", session, windowStart);
        String digits = Long.toString(windowStart);
        StringBuilder b = new StringBuilder(session.length() + 24).append(session).append("/w/");
        for (int i = digits.length(); i < 20; i++) b.append('0');
        return b.append(digits).append('/').toString();
    }

    /** The decode stage's latest {@code TraceSession} record of each session: for queries. */
    public static final String SESSION_RECORDS_STORE = "aggregate-session-records";

    /** @param indexes where the tasks of this instance keep their row indexes, for the query API */
    public static void build(StreamsBuilder builder, AggregateSettings settings, RowIndexes indexes) {
        // the stores' changelogs are the stage's own state, read by nothing else: single-object encoding
        // whatever the topics use, so a registry sees only the topics' subjects and state reads back either way
        AggregateStores.addTo(builder, new io.swapstream.schemas.serde.SingleObjectSerdeFactory(), settings.config());
        // a session's batches and its session records share a partition: one processor takes both, typed
        KStream<String, AggregateInput> batches = builder.stream(settings.batches().name(), settings.batches().consumed())
                .mapValues(AggregateInput::batch, Named.as("batch-in"));
        KStream<String, AggregateInput> sessions = builder.stream(settings.sessions().name(), settings.sessions().consumed())
                .mapValues(AggregateInput::session, Named.as("session-in"));
        KStream<String, SpecificRecord> out = batches.merge(sessions, Named.as("batches-and-sessions"))
                .process(() -> new AggregateProcessor(settings, SwitchBatchSerde.forConfig(settings.config()).deserializer(), indexes),
                        Named.as("aggregate"), SESSIONS_STORE, ACCUMULATORS_STORE, REDO_STORE, THREADS_STORE, STATS_STORE, SESSION_RECORDS_STORE);
        // two record types out of one processor: each to its topic, typed
        out.filter((k, v) -> v instanceof ThreadStats, Named.as("thread-stats-out")).mapValues(v -> (ThreadStats) v, Named.as("as-thread-stats"))
                .to(settings.stats().name(), settings.stats().produced());
        out.filter((k, v) -> v instanceof WakeEdge, Named.as("wake-edges-out")).mapValues(v -> (WakeEdge) v, Named.as("as-wake-edges"))
                .to(settings.wakeEdges().name(), settings.wakeEdges().produced());
    }
}
