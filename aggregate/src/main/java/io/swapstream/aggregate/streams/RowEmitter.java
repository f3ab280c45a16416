package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.RowIndex;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.stage.StateStores;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Sends a thread's row to {@code etw.thread-stats} and keeps the latest in the stats store for queries:
 * whole-session rows, and each session's last few windows (the topic has them all); with windows, a running
 * session's whole-session rows go to the store alone ({@link #keep}). Sends a closed window's wake edges to
 * {@code etw.wake-edges}.
 */
final class RowEmitter {
    private final ProcessorContext<String, SpecificRecord> context;
    private final KeyValueStore<String, ThreadStats> latest;
    private final AggregateSettings settings;
    private final AggregateMetrics metrics;
    private final RowIndexes indexes;
    private final String task;
    private final RowIndex index;

    RowEmitter(ProcessorContext<String, SpecificRecord> context, AggregateSettings settings, AggregateMetrics metrics, RowIndexes indexes) {
        this.context = context;
        this.latest = context.getStateStore(AggregateTopology.STATS_STORE);
        this.settings = settings;
        this.metrics = metrics;
        this.indexes = indexes;
        this.task = context.taskId().toString();
        this.index = indexes.open(task);
        // the store's rows as restored: once per task start
        try (KeyValueIterator<String, ThreadStats> it = latest.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                boolean window = kv.key.startsWith(kv.value.getSession() + "/w/");
                index.put(kv.key, kv.value, window ? kv.value.getWindowStartNanos() : null);
            }
        }
    }

    /** The task leaves this instance (or stops): its rows are no longer answered here. */
    void close() {
        indexes.close(task, index);
    }

    /**
     * A closed window's wake edges, keyed {@code wakerProcess/wokenProcess/windowStart/session}: one key per session's
     * record, so a session processed again (a second run, a reset) replaces its records on the compacted topic rather
     * than adding to them; the edge's records of every host still share a partition (the partitioner takes the key up
     * to its first '/').
     */
    void emitEdges(OpenSession o, List<WakeEdge> edges) {
        for (WakeEdge e : edges) {
            metrics.wakeEdgesOut.record();
            context.forward(new Record<>(edgeKey(e), e, o.timestamp));
        }
    }

    static String edgeKey(WakeEdge e) {
        return e.getWakerProcess() + "/" + e.getWokenProcess() + "/" + e.getWindowStartNanos() + "/" + e.getSession();
    }

    /**
     * One row: a window's ({@code windowStart} given) or the whole session's (null: first to last switch); {@code complete}
     * false marks one computed from a session's time that is not known (docs/architecture.md "Incomplete sessions").
     */
    void emit(OpenSession o, int tid, ThreadStatsAccumulator a, Long windowStart, boolean isFinal, boolean complete) {
        ThreadStats stats = row(o, tid, a, windowStart, isFinal, complete, true);
        metrics.statsOut.record();
        if (!complete) metrics.incompleteStatsOut.record();
        // the sink serializes the row as it is forwarded: the topic gets its sketches
        context.forward(new Record<>(ThreadStatsFields.key(o.session, tid, windowStart), stats, o.timestamp));
        // the store answers queries, which show no sketch bytes: kept there too, they doubled the rows'
        // bytes on the brokers (the store's changelog) for nothing a reader asks of the store
        stats.setWaitSketch(null);
        stats.setReadySketch(null);
        stats.setRunSketch(null);
        stats.setReadyIdleWakeSketch(null);
        stats.setReadyContendedSketch(null);
        keep(o.session, tid, stats, windowStart);
    }

    /**
     * A running session's whole-session row, for queries alone: with windows the topic has the windows' rows, whose
     * sketches a reader merges into the same statistics, and the row itself once, final, at the session's end.
     */
    void keep(OpenSession o, int tid, ThreadStatsAccumulator a, boolean complete) {
        keep(o.session, tid, row(o, tid, a, null, false, complete, false), null);
    }

    private ThreadStats row(OpenSession o, int tid, ThreadStatsAccumulator a, Long windowStart, boolean isFinal, boolean complete,
                            boolean sketches) {
        long start = windowStart != null ? windowStart : a.firstNanos();
        long end = windowStart != null ? windowStart + settings.windowNanos() : a.lastNanos();
        ThreadLabel info = o.label(tid);
        String host = o.state.host != null ? o.state.host : LogfileHeader.hostOf(o.session);
        ThreadStats stats = a.toStats(o.session, host, tid, info == null ? null : info.processId(),
                info == null ? null : info.processName(), info == null ? null : info.threadName(), start, end, isFinal, sketches);
        stats.setComplete(complete);
        return stats;
    }

    private void keep(String session, int tid, ThreadStats stats, Long windowStart) {
        String storeKey = windowStart == null ? ThreadStatsFields.key(session, tid, null) : AggregateTopology.windowRowKey(session, windowStart, tid);
        latest.put(storeKey, stats);
        index.put(storeKey, stats, windowStart);
    }

    /** The window starting at {@code windowStart} leaves the stats store: it is no longer among the session's last few. */
    void dropWindow(String session, long windowStart) {
        removeAll(AggregateTopology.windowRowPrefix(session, windowStart));
    }

    /** The session leaves the stats store; returns how many rows it had there. */
    int forget(String session) {
        return removeAll(session + "/");
    }

    /** Removes the stats store's keys that begin with {@code prefix}. */
    private int removeAll(String prefix) {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, ThreadStats> it = latest.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        for (String k : keys) {
            StateStores.remove(latest, k);
            index.remove(k);
        }
        return keys.size();
    }
}
