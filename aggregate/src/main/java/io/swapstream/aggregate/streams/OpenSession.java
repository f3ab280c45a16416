package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.decode.AvroRecords;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import io.swapstream.stage.StateStores;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A session in a task's memory: its {@link SessionStatistics}, and the accumulators it pages between
 * memory and the accumulators store. Changed accumulators are written at each flush; a thread that did
 * not run since leaves memory (the store has it), as exited threads pile up over a long session and
 * memory should follow the threads that run.
 */
final class OpenSession implements SessionStatistics.Accumulators {
    final String session;
    final AggregateSession state;
    final SessionStatistics statistics;
    /** The timestamp of the input record being taken: its rows carry it. */
    long timestamp;
    /** Taking the batches since the last flush again after a restart: nothing is emitted. */
    boolean replaying;
    /** Skipping batches this session has taken before: one log line for a run of them. */
    boolean skipping;

    private final AggregateStores stores;
    private final RowEmitter rows;
    private final AggregateSettings settings;
    private final AggregateMetrics metrics;
    /** The session's key prefixes, built once: a key per thread's first switch after each flush. */
    private final String wholeKeys, windowKeys;
    private final Int2ObjectOpenHashMap<AccumulatorSlot> whole = new Int2ObjectOpenHashMap<>();
    private final Int2ObjectOpenHashMap<AccumulatorSlot> window = new Int2ObjectOpenHashMap<>();
    private long windowStart = Long.MIN_VALUE;
    private final List<AccumulatorSlot> dirty = new ArrayList<>();
    /** Accumulators and labels the store may hold that are not in memory: after a restart, or once idle threads left memory. */
    private final boolean restored;
    private boolean evicted;
    private boolean windowMayBeStored;
    private final Int2ObjectOpenHashMap<ThreadInfo> labelled = new Int2ObjectOpenHashMap<>();
    /**
     * Threads of the windows closed since the last flush: their window keys go at the next flush,
     * with the whole-session accumulators those windows merged into. Until then a restart finds
     * the window as of the last flush, takes the batches since again, and merges it again.
     */
    private final IntArrayList closedWindowThreads = new IntArrayList();
    /** Threads whose open-window key is in the store (not known after a restart: then every key is deleted). */
    private final IntOpenHashSet windowStored = new IntOpenHashSet();
    /** Thread records taken since the last flush: written with the accumulators, the latest per thread. */
    private final IntOpenHashSet labelsToWrite = new IntOpenHashSet();
    /** Threads whose label is in the store. */
    private final IntOpenHashSet labelsStored = new IntOpenHashSet();
    /**
     * Threads whose whole-session accumulator changed since their row went out, and left memory: their row goes out
     * from the store. In memory the slot's flag says it, as a switch sets it (without windows) where a set's lookup per switch would cost.
     */
    private final IntOpenHashSet wholeChanged = new IntOpenHashSet();
    /** The batch count when a window last closed (-1: none yet). */
    private long batchesAtClose = -1;
    /**
     * Windows close within a quarter of the flush interval: whole-session accumulators of running threads stay in
     * memory, merged at each close and written with the rest, as a store round trip per thread per close would
     * cost more than the statistics (a quarter more CPU for p40.etl in 1 s windows). Else they wait in the store.
     */
    private boolean shortWindows;

    OpenSession(String session, AggregateSession state, AggregateStores stores, RowEmitter rows, AggregateSettings settings,
                AggregateMetrics metrics) {
        this.session = session;
        this.state = state;
        this.stores = stores;
        this.rows = rows;
        this.settings = settings;
        this.metrics = metrics;
        this.wholeKeys = AggregateStores.wholePrefix(session);
        this.windowKeys = AggregateStores.windowPrefix(session);
        this.restored = state.batches > 0;
        this.statistics = new SessionStatistics(settings.windowNanos(), this);
        if (state.statistics.length > 0) statistics.readState(new StateReader(state.statistics, 0, state.statistics.length));
    }

    @Override
    public ThreadStatsAccumulator of(int tid, long start) {
        AccumulatorSlot s;
        if (start == SessionStatistics.WHOLE) {
            s = wholeAccumulatorSlot(tid);
        } else {
            if (start != windowStart) {
                window.clear();
                // a window that opens while this session is in memory has nothing in the store yet
                windowMayBeStored = restored && windowStart == Long.MIN_VALUE;
                windowStart = start;
            }
            s = window.get(tid);
            if (s == null) {
                String key = windowKeys + tid;
                window.put(tid, s = windowMayBeStored ? load(key, tid, start) : fresh(key, tid, start));
            }
        }
        if (!s.dirty) {
            s.dirty = true;
            dirty.add(s);
        }
        s.changedSinceEmit = true;
        return s.accumulator;
    }

    /** The thread's whole-session accumulator, from memory or the store, marked changed by nobody. */
    private AccumulatorSlot wholeAccumulatorSlot(int tid) {
        AccumulatorSlot s = whole.get(tid);
        if (s == null) {
            String key = wholeKeys + tid;
            whole.put(tid, s = restored || evicted ? load(key, tid, SessionStatistics.WHOLE) : fresh(key, tid, SessionStatistics.WHOLE));
            s.changedSinceEmit = wholeChanged.remove(tid);
        }
        return s;
    }

    /** The thread's whole-session accumulator as memory or the store has it, not kept in memory; null when neither has one. */
    private ThreadStatsAccumulator wholeAccumulator(int tid) {
        AccumulatorSlot s = whole.get(tid);
        if (s != null) return s.accumulator;
        if (!restored && !evicted) return null;
        byte[] b = stores.accumulators().get(wholeKeys + tid);
        return b == null ? null : AccumulatorCodec.decode(b);
    }

    @Override
    public void windowClosed(long start) {
        // the store has every accumulator written by earlier batches; this batch's are in memory
        Map<Integer, ThreadStatsAccumulator> closed = new LinkedHashMap<>();
        boolean inMemory = start == windowStart;
        // a window opened in memory is all in memory: the store holds only older windows' keys
        if (!inMemory || windowMayBeStored) {
            try (KeyValueIterator<String, byte[]> it = stores.accumulators().prefixScan(windowKeys, new StringSerializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    int tid = Integer.parseInt(kv.key.substring(windowKeys.length()));
                    // one in memory is newer than the stored one: decoding the stored one would be wasted
                    if (AccumulatorCodec.windowStartOf(kv.value) == start && !(inMemory && window.containsKey(tid))) {
                        closed.put(tid, AccumulatorCodec.decode(kv.value));
                    }
                }
            }
        }
        if (inMemory) {
            for (AccumulatorSlot s : window.values()) {
                closed.put(s.tid, s.accumulator);
                s.dropped = true;
            }
            window.clear();
            dirty.removeIf(s -> s.dropped);
        }
        // each window accumulator goes as its thread's whole-session one comes from the store: one per thread in memory, not two
        for (Iterator<Map.Entry<Integer, ThreadStatsAccumulator>> it = closed.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Integer, ThreadStatsAccumulator> e = it.next();
            if (!replaying) rows.emit(this, e.getKey(), e.getValue(), start, true);
            of(e.getKey(), SessionStatistics.WHOLE).merge(e.getValue());
            closedWindowThreads.add(e.getKey().intValue());
            it.remove();
        }
        if (!replaying) metrics.windowsClosed.record();
        shortWindows = batchesAtClose >= 0 && state.batches - batchesAtClose < settings.flushBatches() / 4;
        batchesAtClose = state.batches;
        rows.dropWindow(session, start - settings.keepWindows() * settings.windowNanos());
    }

    @Override
    public void label(io.swapstream.decode.ThreadInfo t) {
        labelled.put(t.threadId(), AvroRecords.of(t));
        // a store write per thread record would cost more than its statistics: written at the flush, as the accumulators
        labelsToWrite.add(t.threadId());
        if (!replaying) state.threads++; // counted the first time round
    }

    /** The thread's label: from memory, or after a restart the store's. */
    ThreadInfo label(int tid) {
        ThreadInfo info = labelled.get(tid);
        return info == null && restored ? stores.labels().get(session + "/" + tid) : info;
    }

    private AccumulatorSlot fresh(String key, int tid, long start) {
        return new AccumulatorSlot(key, tid, start, new ThreadStatsAccumulator());
    }

    private AccumulatorSlot load(String key, int tid, long start) {
        byte[] b = stores.accumulators().get(key);
        ThreadStatsAccumulator a;
        if (b == null) a = new ThreadStatsAccumulator();
        else if (start == SessionStatistics.WHOLE) a = AccumulatorCodec.decode(b);
        else if (AccumulatorCodec.windowStartOf(b) == start) a = AccumulatorCodec.decode(b);
        else if (AccumulatorCodec.windowStartOf(b) < start) a = new ThreadStatsAccumulator(); // a closed window's, merged, going at the next flush
        else throw new IllegalStateException(key + " holds window " + AccumulatorCodec.windowStartOf(b) + ", not the open " + start);
        AccumulatorSlot s = new AccumulatorSlot(key, tid, start, a);
        s.stored = b != null;
        if (b != null && start != SessionStatistics.WHOLE) windowStored.add(tid);
        return s;
    }

    /** Notes batch {@code entry} (a reference to the input topic) taken: a restore takes it again. */
    void noteBatch(byte[] entry, int bytes) {
        stores.redo().put(AggregateStores.redoKey(session, state.batches++), entry);
        state.redoBytes += bytes;
    }

    /** After each record: the session's progress, and the accumulators when a flush is due. */
    void save() {
        long since = state.batches - state.flushedBatches;
        // a closed window's threads have their whole-session accumulators in memory until written: at once, unless windows are short
        if (since >= settings.flushBatches() || state.redoBytes >= AggregateTopology.REDO_MAX_BYTES
                || (!closedWindowThreads.isEmpty() && (!shortWindows || since >= settings.flushBatches() / 4))) {
            flush();
        }
        stores.progress().put(session, state.encode());
    }

    /** Writes every accumulator changed since the last time, and starts a new redo span. */
    private void flush() {
        for (int i = 0; i < closedWindowThreads.size(); i++) {
            int tid = closedWindowThreads.getInt(i);
            AccumulatorSlot open = window.get(tid);
            // else the open window's put below replaces it
            if ((open == null || !open.dirty) && windowKeyMayBeStored(tid)) {
                StateStores.remove(stores.accumulators(), windowKeys + tid);
                windowStored.remove(tid);
            }
        }
        closedWindowThreads.clear();
        for (AccumulatorSlot s : dirty) {
            if (s.dropped) continue;
            stores.accumulators().put(s.key, s.encode());
            s.stored = true;
            if (s.start != SessionStatistics.WHOLE) windowStored.add(s.tid);
        }
        for (IntIterator it = labelsToWrite.iterator(); it.hasNext(); ) {
            int tid = it.nextInt();
            stores.labels().put(session + "/" + tid, labelled.get(tid));
            labelsStored.add(tid);
        }
        labelsToWrite.clear();
        /*
         * With windows, a whole-session accumulator changes only when a window closes: between closes all of them
         * wait in the store (written above), and a running thread has only its window's in memory; a change not yet
         * emitted is noted. Without windows, or with short ones, those of threads that did not run wait there.
         */
        boolean keepRunning = settings.windowNanos() == 0 || shortWindows;
        if (whole.values().removeIf(s -> {
            if (keepRunning && (s.dirty || s.changedSinceEmit || window.containsKey(s.tid))) return false;
            if (s.changedSinceEmit) wholeChanged.add(s.tid);
            return true;
        })) evicted = true;
        for (AccumulatorSlot s : dirty) s.dirty = false;
        dirty.clear();
        dropRedo();
        // what carries over between batches (open window, PMC baselines), as of the accumulators just written
        StateWriter o = new StateWriter(64);
        statistics.writeState(o);
        state.statistics = o.toByteArray();
    }

    private void dropRedo() {
        for (long i = state.flushedBatches; i < state.batches; i++) StateStores.remove(stores.redo(), AggregateStores.redoKey(session, i));
        state.flushedBatches = state.batches;
        state.redoBytes = 0;
    }

    private boolean windowKeyMayBeStored(int tid) {
        return restored || windowStored.contains(tid);
    }

    /**
     * Emits the whole-session rows that changed since the last time: a thread's closed windows (its
     * whole-session accumulator) and its open window, together.
     */
    void emitChanged() {
        for (AccumulatorSlot w : window.values()) {
            if (!w.changedSinceEmit) continue;
            w.changedSinceEmit = false;
            AccumulatorSlot s = whole.get(w.tid);
            if (s != null) s.changedSinceEmit = false;
            wholeChanged.remove(w.tid);
            ThreadStatsAccumulator sum = new ThreadStatsAccumulator();
            ThreadStatsAccumulator closed = wholeAccumulator(w.tid);
            if (closed != null) sum.merge(closed);
            sum.merge(w.accumulator);
            rows.emit(this, w.tid, sum, null, false);
        }
        for (AccumulatorSlot s : whole.values()) {
            if (!s.changedSinceEmit) continue;
            s.changedSinceEmit = false;
            rows.emit(this, s.tid, s.accumulator, null, false);
        }
        for (IntIterator it = wholeChanged.iterator(); it.hasNext(); ) {
            int tid = it.nextInt();
            ThreadStatsAccumulator a = wholeAccumulator(tid);
            if (a != null) rows.emit(this, tid, a, null, false);
        }
        wholeChanged.clear();
    }

    /** Every switch and thread record has arrived: the last window and every whole-session row go out final; the state but the progress goes. */
    void finish(long nowMs) {
        statistics.closeAll();
        for (int i = 0; i < closedWindowThreads.size(); i++) {
            int tid = closedWindowThreads.getInt(i);
            if (windowKeyMayBeStored(tid)) StateStores.remove(stores.accumulators(), windowKeys + tid);
        }
        closedWindowThreads.clear();
        Map<Integer, ThreadStatsAccumulator> finals = new LinkedHashMap<>();
        IntOpenHashSet stored = new IntOpenHashSet();
        // all in memory unless restored or evicted
        if (restored || evicted) {
            try (KeyValueIterator<String, byte[]> it = stores.accumulators().prefixScan(wholeKeys, new StringSerializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    int tid = Integer.parseInt(kv.key.substring(wholeKeys.length()));
                    stored.add(tid);
                    if (!whole.containsKey(tid)) finals.put(tid, AccumulatorCodec.decode(kv.value));
                }
            }
        }
        for (AccumulatorSlot s : whole.values()) {
            finals.put(s.tid, s.accumulator);
            if (s.stored) stored.add(s.tid);
        }
        for (Map.Entry<Integer, ThreadStatsAccumulator> e : finals.entrySet()) {
            int tid = e.getKey();
            rows.emit(this, tid, e.getValue(), null, true);
            // keys never written need no delete (a tombstone each in the changelog)
            if (stored.contains(tid)) StateStores.remove(stores.accumulators(), wholeKeys + tid);
        }
        // every label written, threads without a row too; after a restart, whatever the store holds
        if (restored) {
            List<String> keys = new ArrayList<>();
            try (KeyValueIterator<String, ThreadInfo> it = stores.labels().prefixScan(session + "/", new StringSerializer())) {
                it.forEachRemaining(kv -> keys.add(kv.key));
            }
            keys.forEach(k -> StateStores.remove(stores.labels(), k));
        } else {
            for (IntIterator it = labelsStored.iterator(); it.hasNext(); ) StateStores.remove(stores.labels(), session + "/" + it.nextInt());
        }
        dropRedo();
        state.done = true;
        state.endedMs = nowMs;
        state.statistics = new byte[0];
        stores.progress().put(session, state.encode());
    }
}
