package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.streams.AvroRecords;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.StageCounters;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.etw.LogfileHeader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Feeds each session's switch batches, with the thread records they carry, to the offline
 * {@link SessionStatistics}. Every accumulator a
 * batch touched is written once per batch to a cached store, and the session's own state with it,
 * so store and outputs commit together (exactly once) through the public state-store API. A window
 * is emitted once, {@code final}, as soon as the session's switches pass its end, and its state is
 * dropped; whole-session rows are emitted as they change and {@code final} once the decode stage's
 * end-of-session record says every batch and thread record has arrived.
 */
final class AggregateProcessor implements Processor<String, Object, String, ThreadStats> {
    private final long windowNanos;
    private final long emitIntervalMs;
    private ProcessorContext<String, ThreadStats> context;
    private KeyValueStore<String, byte[]> accumulators;
    private KeyValueStore<String, byte[]> sessions;
    private KeyValueStore<String, ThreadInfo> labels;
    private KeyValueStore<String, ThreadStats> latest;
    /** Sessions in this task's memory: a cache of what the stores hold as of the last record. */
    private final Map<String, Open> open = new HashMap<>();

    AggregateProcessor(long windowNanos, long emitIntervalMs) {
        this.windowNanos = windowNanos;
        this.emitIntervalMs = emitIntervalMs;
    }

    /** One accumulator as loaded, with its store key: a switch costs no key string and no store lookup. */
    private static final class Slot {
        final String key;
        final int tid;
        final ThreadStatsAccumulator accumulator;
        long touchedBatch = -1;
        boolean changedSinceEmit;
        boolean dropped;

        Slot(String key, int tid, ThreadStatsAccumulator accumulator) {
            this.key = key;
            this.tid = tid;
            this.accumulator = accumulator;
        }
    }

    /** A session in memory: its state, its statistics, and the accumulators it has loaded. */
    private final class Open implements SessionStatistics.Accumulators {
        final String session;
        final AggregateSession state;
        final SessionStatistics statistics;
        final Map<Integer, Slot> whole = new HashMap<>();
        final Map<Integer, Slot> window = new HashMap<>();
        long windowStart = Long.MIN_VALUE;
        final List<Slot> touched = new ArrayList<>();
        long batch;
        long timestamp;

        Open(String session, AggregateSession state) {
            this.session = session;
            this.state = state;
            this.statistics = new SessionStatistics(windowNanos, this);
            if (state.statistics.length > 0) {
                try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(state.statistics))) {
                    statistics.readState(in);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }

        @Override
        public ThreadStatsAccumulator of(int tid, long start) {
            Slot s;
            if (start == SessionStatistics.WHOLE) {
                s = whole.get(tid);
                if (s == null) whole.put(tid, s = load(wholeKey(session, tid), tid));
            } else {
                if (start != windowStart) {
                    window.clear();
                    windowStart = start;
                }
                s = window.get(tid);
                if (s == null) window.put(tid, s = load(windowKey(session, start, tid), tid));
            }
            if (s.touchedBatch != batch) {
                s.touchedBatch = batch;
                s.changedSinceEmit = true;
                touched.add(s);
            }
            return s.accumulator;
        }

        @Override
        public void windowClosed(long start) {
            // the store has every accumulator written by earlier batches; this batch's are in memory
            Map<Integer, ThreadStatsAccumulator> rows = new LinkedHashMap<>();
            String prefix = windowPrefix(session, start);
            try (KeyValueIterator<String, byte[]> it = accumulators.prefixScan(prefix, new org.apache.kafka.common.serialization.StringSerializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    rows.put(Integer.parseInt(kv.key.substring(prefix.length())), AccumulatorCodec.decode(kv.value));
                }
            }
            if (start == windowStart) {
                for (Slot s : window.values()) {
                    rows.put(s.tid, s.accumulator);
                    s.dropped = true;
                }
                window.clear();
            }
            for (Map.Entry<Integer, ThreadStatsAccumulator> e : rows.entrySet()) {
                emit(this, e.getKey(), e.getValue(), start, true);
                accumulators.delete(windowKey(session, start, e.getKey()));
            }
            StageCounters.AGGREGATE.windowsClosed.increment();
        }

        @Override
        public void label(io.swapstream.decode.ThreadInfo t) {
            labels.put(session + "/" + t.threadId(), AvroRecords.of(t));
            state.threads++;
        }

        private Slot load(String key, int tid) {
            byte[] b = accumulators.get(key);
            return new Slot(key, tid, b == null ? new ThreadStatsAccumulator() : AccumulatorCodec.decode(b));
        }

        /** After a batch: each touched accumulator written once, and the session state. */
        void save() {
            for (Slot s : touched) if (!s.dropped) accumulators.put(s.key, AccumulatorCodec.encode(s.accumulator));
            touched.clear();
            batch++;
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
            try (DataOutputStream o = new DataOutputStream(bytes)) {
                statistics.writeState(o);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            state.statistics = bytes.toByteArray();
            sessions.put(session, state.encode());
        }
    }

    static String wholeKey(String session, int tid) { return session + "/t/" + tid; }
    static String windowPrefix(String session, long start) { return session + "/w/" + start + "/"; }
    static String windowKey(String session, long start, int tid) { return windowPrefix(session, start) + tid; }

    @Override
    public void init(ProcessorContext<String, ThreadStats> context) {
        this.context = context;
        this.accumulators = context.getStateStore(AggregateTopology.ACCUMULATORS_STORE);
        this.sessions = context.getStateStore(AggregateTopology.SESSIONS_STORE);
        this.labels = context.getStateStore(AggregateTopology.THREADS_STORE);
        this.latest = context.getStateStore(AggregateTopology.STATS_STORE);
        open.clear();
        context.schedule(Duration.ofMillis(emitIntervalMs), PunctuationType.WALL_CLOCK_TIME, now -> emitChanged());
    }

    @Override
    public void close() {
        open.clear();
    }

    @Override
    public void process(Record<String, Object> record) {
        String session = SessionPartitioner.session(record.key());
        Open o = open(session);
        o.timestamp = record.timestamp();
        Object v = record.value();
        if (o.state.done) {
            if (v instanceof SwitchBatch) {
                o.state.lateBatches++;
                sessions.put(session, o.state.encode());
            }
            return;
        }
        if (v instanceof SwitchBatch b) {
            StageCounters.AGGREGATE.switchesIn.add(b.count());
            o.state.host = b.host();
            o.statistics.accept(b);
            o.state.switches += b.count();
        } else if (v instanceof TraceSession t && t.getEndReason() != null) {
            o.state.expectedSwitches = t.getSwitchCount() == null ? 0 : t.getSwitchCount();
            o.state.expectedThreads = t.getThreadRecords();
            o.state.endReason = t.getEndReason();
            if (o.state.host == null) o.state.host = t.getHost();
        } else {
            return;
        }
        o.save();
        if (o.state.allArrived()) finish(o);
    }

    private Open open(String session) {
        Open o = open.get(session);
        if (o == null) {
            o = new Open(session, AggregateSession.decode(sessions.get(session)));
            if (!o.state.done) open.put(session, o);
        }
        return o;
    }

    /** Emits the whole-session rows that changed since the last time. */
    private void emitChanged() {
        for (Open o : open.values()) {
            for (Slot s : o.whole.values()) {
                if (!s.changedSinceEmit) continue;
                s.changedSinceEmit = false;
                emit(o, s.tid, s.accumulator, null, false);
            }
        }
    }

    /** Every switch and thread record has arrived: the last window and every whole-session row go out final; the state goes. */
    private void finish(Open o) {
        o.statistics.closeAll();
        String prefix = o.session + "/t/";
        Map<Integer, ThreadStatsAccumulator> rows = new LinkedHashMap<>();
        try (KeyValueIterator<String, byte[]> it = accumulators.prefixScan(prefix, new org.apache.kafka.common.serialization.StringSerializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                rows.put(Integer.parseInt(kv.key.substring(prefix.length())), AccumulatorCodec.decode(kv.value));
            }
        }
        for (Slot s : o.whole.values()) rows.put(s.tid, s.accumulator);
        for (Map.Entry<Integer, ThreadStatsAccumulator> e : rows.entrySet()) {
            ThreadStatsAccumulator a = e.getValue();
            emit(o, e.getKey(), a, null, true);
            accumulators.delete(wholeKey(o.session, e.getKey()));
            labels.delete(o.session + "/" + e.getKey());
        }
        o.state.done = true;
        o.state.statistics = new byte[0];
        sessions.put(o.session, o.state.encode());
        open.remove(o.session);
        StageCounters.AGGREGATE.sessionsEnded.increment();
    }

    /** One row: a window's ({@code windowStart} given) or the whole session's (null: first to last switch). */
    private void emit(Open o, int tid, ThreadStatsAccumulator a, Long windowStart, boolean isFinal) {
        String key = ThreadStatsFields.key(o.session, tid, windowStart);
        long start = windowStart != null ? windowStart : a.firstNanos();
        long end = windowStart != null ? windowStart + windowNanos : a.lastNanos();
        ThreadInfo info = labels.get(o.session + "/" + tid);
        String host = o.state.host != null ? o.state.host : LogfileHeader.hostOf(o.session);
        ThreadStats stats = a.toStats(o.session, host, tid, info == null ? null : info.getProcessId(),
                info == null ? null : info.getProcessName(), info == null ? null : info.getThreadName(), start, end, isFinal);
        latest.put(key, stats);
        StageCounters.AGGREGATE.statsOut.increment();
        context.forward(new Record<>(key, stats, o.timestamp));
    }
}
