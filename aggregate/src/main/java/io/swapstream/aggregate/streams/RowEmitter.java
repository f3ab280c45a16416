package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.decode.streams.StateStores;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.etw.LogfileHeader;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Sends a thread's row to {@code etw.thread-stats} and keeps the latest in the stats store for queries:
 * whole-session rows, and each session's last few windows (the topic has them all).
 */
final class RowEmitter {
    private final ProcessorContext<String, ThreadStats> context;
    private final KeyValueStore<String, ThreadStats> latest;
    private final KeyValueStore<String, ThreadInfo> labels;
    private final AggregateSettings settings;
    private final AggregateMetrics metrics;

    RowEmitter(ProcessorContext<String, ThreadStats> context, AggregateSettings settings, AggregateMetrics metrics) {
        this.context = context;
        this.latest = context.getStateStore(AggregateTopology.STATS_STORE);
        this.labels = context.getStateStore(AggregateTopology.THREADS_STORE);
        this.settings = settings;
        this.metrics = metrics;
    }

    /** One row: a window's ({@code windowStart} given) or the whole session's (null: first to last switch). */
    void emit(OpenSession o, int tid, ThreadStatsAccumulator a, Long windowStart, boolean isFinal) {
        String key = ThreadStatsFields.key(o.session, tid, windowStart);
        long start = windowStart != null ? windowStart : a.firstNanos();
        long end = windowStart != null ? windowStart + settings.windowNanos() : a.lastNanos();
        ThreadInfo info = o.label(tid);
        String host = o.state.host != null ? o.state.host : LogfileHeader.hostOf(o.session);
        ThreadStats stats = a.toStats(o.session, host, tid, info == null ? null : info.getProcessId(),
                info == null ? null : info.getProcessName(), info == null ? null : info.getThreadName(), start, end, isFinal);
        latest.put(windowStart == null ? key : AggregateTopology.windowRowKey(o.session, windowStart, tid), stats);
        metrics.statsOut.record();
        context.forward(new Record<>(key, stats, o.timestamp));
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
        keys.forEach(k -> StateStores.remove(latest, k));
        return keys.size();
    }

    ThreadInfo storedLabel(String session, int tid) {
        return labels.get(session + "/" + tid);
    }
}
