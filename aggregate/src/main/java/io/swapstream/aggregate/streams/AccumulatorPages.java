package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.AccumulatorStore;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.stage.StateStores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * One session's accumulators and thread labels, paged between memory and the stores: each thread's
 * whole-session accumulator and its open window's. Changed ones are written at each {@link #write};
 * a whole-session accumulator whose thread did not run since leaves memory there (the store has it),
 * as exited threads pile up over a long session and memory should follow the threads that run.
 */
final class AccumulatorPages implements AccumulatorStore {
    /** What the stores may hold of the session beyond what memory holds. */
    enum Paging {
        /** Nothing: every accumulator and label is in memory (the stores hold copies of some). */
        IN_MEMORY,
        /** Whole-session accumulators of threads that stopped running left memory at a write: the store has them. */
        EVICTED,
        /** The session was opened from the stores (a restart, or the task moved here): any accumulator or label may be only there. */
        RESTORED
    }

    private final String session;
    private final AggregateStores stores;
    /** The session's key prefixes, built once: a key per thread's first switch after each write. */
    private final String wholeKeys, windowKeys;
    private final Int2ObjectOpenHashMap<AccumulatorSlot> whole = new Int2ObjectOpenHashMap<>();
    private final Int2ObjectOpenHashMap<AccumulatorSlot> window = new Int2ObjectOpenHashMap<>();
    private long windowStart = Long.MIN_VALUE;
    /** The slots changed since the last write. */
    private final List<AccumulatorSlot> changed = new ArrayList<>();
    private Paging paging;
    /** The open window was open before the session was opened from the stores: the store may hold its keys. */
    private boolean windowOpenedBeforeRestore;
    /**
     * Threads of the windows closed since the last write: their window keys go at the next write,
     * with the whole-session accumulators those windows merged into. Until then a restart finds
     * the window as of the last write, takes the batches since again, and merges it again.
     */
    private final IntArrayList closedWindowThreads = new IntArrayList();
    /** Threads whose open-window key is in the store (not known after a restart: then every key is deleted). */
    private final IntOpenHashSet windowStored = new IntOpenHashSet();
    /** Thread records taken since the last write: written with the accumulators, the latest per thread. */
    private final Int2ObjectOpenHashMap<ThreadLabel> labelsToWrite = new Int2ObjectOpenHashMap<>();

    /**
     * Closed windows' accumulators not merged yet into their threads' whole-session ones, by thread: with {@link
     * #writesAtEachClose}, a close gives its rows and the merge (reading each whole-session accumulator back from the store)
     * waits for the write, which the stage spreads over the seconds after a fleet's window end.
     */
    private final Int2ObjectOpenHashMap<ThreadStatsAccumulator> parked = new Int2ObjectOpenHashMap<>();
    /** Windows at least as long as the write span: a write follows each close, so closes park and writes evict all. */
    private final boolean writesAtEachClose;

    AccumulatorPages(String session, AggregateStores stores, boolean restored, boolean writesAtEachClose) {
        this.session = session;
        this.writesAtEachClose = writesAtEachClose;
        this.stores = stores;
        this.wholeKeys = AggregateStores.wholePrefix(session);
        this.windowKeys = AggregateStores.windowPrefix(session);
        this.paging = restored ? Paging.RESTORED : Paging.IN_MEMORY;
    }

    Paging paging() {
        return paging;
    }

    /** The accumulators in memory: whole-session, open window's, and closed windows' waiting to be merged. */
    int inMemory() {
        return whole.size() + window.size() + parked.size();
    }

    @Override
    public ThreadStatsAccumulator of(int tid, long start) {
        AccumulatorSlot s;
        if (start == SessionStatistics.WHOLE) {
            s = whole.get(tid);
            if (s == null) {
                s = paging == Paging.IN_MEMORY ? fresh(wholeKeys + tid, tid, start) : load(wholeKeys + tid, tid, start);
                whole.put(tid, s);
            }
        } else {
            if (start != windowStart) {
                window.clear();
                // a window that opens while this session is in memory has nothing in the store yet
                windowOpenedBeforeRestore = paging == Paging.RESTORED && windowStart == Long.MIN_VALUE;
                windowStart = start;
            }
            s = window.get(tid);
            if (s == null) {
                String key = windowKeys + tid;
                window.put(tid, s = windowOpenedBeforeRestore ? load(key, tid, start) : fresh(key, tid, start));
            }
        }
        if (s.state == AccumulatorSlot.State.WRITTEN) {
            s.state = AccumulatorSlot.State.CHANGED;
            changed.add(s);
        }
        if (start == SessionStatistics.WHOLE) s.rowDue = true;
        return s.accumulator;
    }

    /**
     * The window starting at {@code start} has closed: gives {@code each} its accumulators, then merges each
     * into its thread's whole-session accumulator (with {@link #writesAtEachClose}, at the next write). Its keys go at the
     * next write.
     */
    @Override
    public void closeWindow(long start, Each each) {
        mergeParked();
        // the store has every accumulator written by earlier batches; this batch's are in memory
        Map<Integer, ThreadStatsAccumulator> closed = new LinkedHashMap<>();
        boolean inMemory = start == windowStart;
        // a window opened in memory is all in memory: the store holds only older windows' keys
        if (!inMemory || windowOpenedBeforeRestore) {
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
                s.state = AccumulatorSlot.State.CLOSED;
            }
            window.clear();
            changed.removeIf(s -> s.state == AccumulatorSlot.State.CLOSED);
        }
        // each window accumulator goes as its thread's whole-session one comes from the store: one per thread in memory, not two
        var it = closed.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Integer, ThreadStatsAccumulator> e = it.next();
            each.accept(e.getKey(), e.getValue());
            if (writesAtEachClose) parked.put(e.getKey().intValue(), e.getValue());
            else of(e.getKey(), SessionStatistics.WHOLE).merge(e.getValue());
            closedWindowThreads.add(e.getKey().intValue());
            it.remove();
        }
    }

    /** Windows have closed since the last write, so whole-session accumulators wait in memory to be written. */
    boolean windowsClosedSinceWrite() {
        return !closedWindowThreads.isEmpty();
    }

    /** A closed window's accumulators wait to be merged. */
    boolean mergesWaiting() {
        return !parked.isEmpty();
    }

    private void mergeParked() {
        if (parked.isEmpty()) return;
        for (var e : parked.int2ObjectEntrySet()) of(e.getIntKey(), SessionStatistics.WHOLE).merge(e.getValue());
        parked.clear();
    }

    /** A thread record carried by a batch: written with the accumulators. */
    void label(ThreadLabel t) {
        labelsToWrite.put(t.threadId(), t);
    }

    /** The thread's label as the store has it: after a restart, one written before; else none that memory lacks. */
    ThreadLabel storedLabel(int tid) {
        if (paging != Paging.RESTORED) return null;
        ThreadInfo info = stores.labels().get(labelKey(tid));
        return info == null ? null : AvroRecords.of(info);
    }

    /** After a restart, every label of the session written before. */
    void forEachStoredLabel(java.util.function.Consumer<ThreadLabel> each) {
        if (paging != Paging.RESTORED) return;
        try (KeyValueIterator<String, ThreadInfo> it = stores.labels().prefixScan(session + "/", new StringSerializer())) {
            it.forEachRemaining(kv -> each.accept(AvroRecords.of(kv.value)));
        }
    }

    /**
     * Writes every accumulator and label changed since the last write, and deletes the closed windows'
     * keys. Then whole-session accumulators leave memory: those of threads that did not run since the write
     * before (without windows, or windows that close several times between two writes: a store round trip per
     * thread per close would cost more than the statistics); with {@link #writesAtEachClose}, all of them
     * (a write comes at each close, and a whole-session accumulator changes only then: keeping it would double
     * what a running thread holds, 11 KB an accumulator). One whose row is due goes to {@code rowsLeaving} as it
     * leaves: read back from the store at the next emission instead, it was decoded twice a window.
     */
    void write(Each rowsLeaving) {
        boolean keepRunning = !writesAtEachClose;
        mergeParked();
        for (int i = 0; i < closedWindowThreads.size(); i++) {
            int tid = closedWindowThreads.getInt(i);
            AccumulatorSlot open = window.get(tid);
            // else the open window's put below replaces it
            if ((open == null || !open.unwritten()) && windowKeyMayBeStored(tid)) {
                StateStores.remove(stores.accumulators(), windowKeys + tid);
                windowStored.remove(tid);
            }
        }
        closedWindowThreads.clear();
        for (AccumulatorSlot s : changed) {
            stores.accumulators().put(s.key, s.encode());
            if (s.start != SessionStatistics.WHOLE) windowStored.add(s.tid);
        }
        writeLabels();
        // a slot changed since the previous write is one whose thread ran
        if (whole.values().removeIf(s -> {
            if (keepRunning && (s.unwritten() || s.rowDue || window.containsKey(s.tid))) return false;
            if (s.rowDue) {
                s.rowDue = false;
                rowsLeaving.accept(s.tid, s.accumulator);
            }
            return true;
        }) && paging == Paging.IN_MEMORY) {
            paging = Paging.EVICTED;
        }
        for (AccumulatorSlot s : changed) s.state = AccumulatorSlot.State.WRITTEN;
        changed.clear();
    }

    /**
     * Gives {@code each} the whole-session accumulator of every thread in memory whose row is due: one that changed
     * since its row last went out (those that left memory went out as they left, at {@link #write}). With windows that
     * is at a window's close (its accumulators merged in) or a switch that came after its window had closed; an open
     * window's switches are in no whole-session row until it closes, as a whole-session row and the sum of its
     * thread's closed windows are then one (issue 59: summing the open window in at every emission was a quarter of
     * the stage's thread at 1,000 hosts).
     */
    void takeRowsDue(Each each) {
        for (AccumulatorSlot s : whole.values()) {
            if (!s.rowDue) continue;
            s.rowDue = false;
            each.accept(s.tid, s.accumulator);
        }
    }

    /**
     * The session has ended (its last window closed): gives {@code each} every thread's whole-session
     * accumulator, and deletes every key the session has in the accumulators store. Its labels are written and
     * kept: the query API names each row's readiers by them until the session's retention has passed.
     */
    void takeAll(Each each) {
        mergeParked();
        for (int i = 0; i < closedWindowThreads.size(); i++) {
            int tid = closedWindowThreads.getInt(i);
            if (windowKeyMayBeStored(tid)) StateStores.remove(stores.accumulators(), windowKeys + tid);
        }
        closedWindowThreads.clear();
        Map<Integer, ThreadStatsAccumulator> finals = new LinkedHashMap<>();
        IntOpenHashSet stored = new IntOpenHashSet();
        if (paging != Paging.IN_MEMORY) {
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
            if (s.inStore()) stored.add(s.tid);
        }
        for (Map.Entry<Integer, ThreadStatsAccumulator> e : finals.entrySet()) {
            int tid = e.getKey();
            each.accept(tid, e.getValue());
            // keys never written need no delete (a tombstone each in the changelog)
            if (stored.contains(tid)) StateStores.remove(stores.accumulators(), wholeKeys + tid);
        }
        // the labels stay until the session leaves the stores (its retention): queries name each row's readiers by them
        writeLabels();
    }

    private void writeLabels() {
        labelsToWrite.forEach((tid, t) -> stores.labels().put(labelKey(tid), AvroRecords.of(t)));
        labelsToWrite.clear();
    }

    private String labelKey(int tid) {
        return session + "/" + tid;
    }

    private boolean windowKeyMayBeStored(int tid) {
        return paging == Paging.RESTORED || windowStored.contains(tid);
    }

    /** A new accumulator, changed from the start. */
    private AccumulatorSlot fresh(String key, int tid, long start) {
        AccumulatorSlot s = new AccumulatorSlot(key, tid, start, new ThreadStatsAccumulator(), AccumulatorSlot.State.UNWRITTEN);
        changed.add(s);
        return s;
    }

    /** The store's accumulator (a new one when it has none), changed from the start. */
    private AccumulatorSlot load(String key, int tid, long start) {
        byte[] b = stores.accumulators().get(key);
        ThreadStatsAccumulator a;
        if (b == null) a = new ThreadStatsAccumulator();
        else if (start == SessionStatistics.WHOLE) a = AccumulatorCodec.decode(b);
        else if (AccumulatorCodec.windowStartOf(b) == start) a = AccumulatorCodec.decode(b);
        else if (AccumulatorCodec.windowStartOf(b) < start) a = new ThreadStatsAccumulator(); // a closed window's, merged, going at the next write
        else throw new IllegalStateException(key + " holds window " + AccumulatorCodec.windowStartOf(b) + ", not the open " + start);
        AccumulatorSlot s = new AccumulatorSlot(key, tid, start, a, b == null ? AccumulatorSlot.State.UNWRITTEN : AccumulatorSlot.State.CHANGED);
        if (b != null && start != SessionStatistics.WHOLE) windowStored.add(tid);
        changed.add(s);
        return s;
    }
}
