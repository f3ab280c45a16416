package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.SwitchBatchSerde;
import io.swapstream.decode.streams.AvroRecords;
import io.swapstream.decode.streams.BatchSequence;
import io.swapstream.decode.streams.InputRecordReader;
import io.swapstream.decode.streams.StateStores;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
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
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Feeds each session's switch batches, with the thread records they carry, to the offline
 * {@link SessionStatistics}. Its state goes through the public state-store API and commits with the
 * outputs (exactly once): the accumulators a session's batches changed are written every
 * {@link SwapstreamConfig#AGGREGATE_FLUSH_BATCHES} batches (encoding a quantile sketch per thread per batch would cost more
 * than the statistics), and the batches since are noted (their offsets in the input topic), so a
 * restarted instance takes the accumulators and reads those batches back and takes them again,
 * emitting nothing, and goes on as before. A window is emitted
 * once, {@code final}, as soon as the session's switches pass its end, and its state is dropped;
 * whole-session rows are emitted as they change and {@code final} once the decode stage's
 * end-of-session record says every batch and thread record has arrived. Exactly-once v2 commits the
 * rows with the state that emitted them, so a restore neither loses nor doubles one.
 */
final class AggregateProcessor implements Processor<String, Object, String, byte[]> {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AggregateProcessor.class);
    private final long windowNanos;
    private final long emitIntervalMs;
    private ProcessorContext<String, byte[]> context;
    /** A session's progress, accumulators and redo entries: see {@link AggregateTopology#SESSIONS_STORE}. */
    private KeyValueStore<String, byte[]> store;
    private KeyValueStore<String, ThreadInfo> labels;
    private KeyValueStore<String, ThreadStats> latest;
    private final String batchTopic;
    private InputRecordReader inputs;
    private final org.apache.kafka.common.serialization.Deserializer<SwitchBatch> batches;
    /** Each batch is taken whole before the next is read: one batch's columns serve them all. */
    private SwitchBatch reused;
    /** The redo log's bound: whichever comes first (slots, or bytes: a few MiB of switches between two writes of the sketches). */
    static final long FLUSH_BYTES = AggregateTopology.REDO_MAX_BYTES;
    private final int flushBatches;
    private final int keepWindows;
    private KeyValueStore<String, TraceSession> sessionRecords;
    /** Sessions in this task's memory: a cache of what the stores hold as of the last record. */
    private final Map<String, Open> open = new HashMap<>();

    /** Rows go out serialized: the bytes sent are the bytes kept and compared with the topic's. */
    private final org.apache.kafka.common.serialization.Serializer<ThreadStats> rowWriter;
    private final String statsTopic;
    private final long retentionMs;

    AggregateProcessor(String batchTopic, long windowNanos, long emitIntervalMs,
                       org.apache.kafka.common.serialization.Deserializer<SwitchBatch> batches, int flushBatches, int keepWindows,
                       String statsTopic, org.apache.kafka.common.serialization.Serde<ThreadStats> rows, long retentionMs) {
        this.statsTopic = statsTopic;
        this.retentionMs = retentionMs;
        this.rowWriter = rows.serializer();
        this.batchTopic = batchTopic;
        this.flushBatches = flushBatches;
        this.keepWindows = keepWindows;
        this.windowNanos = windowNanos;
        this.emitIntervalMs = emitIntervalMs;
        this.batches = batches;
    }

    /** One accumulator as loaded, with its store key: a switch costs no key string and no store lookup. */
    private static final class Slot {
        final String key;
        final int tid;
        /** The window's start, or {@link SessionStatistics#WHOLE}. */
        final long start;
        final ThreadStatsAccumulator accumulator;
        /** Changed since the accumulators were last written. */
        boolean dirty;
        /** In the store (written at a flush, or loaded from it): only then does the end delete its key. */
        boolean stored;
        boolean changedSinceEmit;
        boolean dropped;

        Slot(String key, int tid, long start, ThreadStatsAccumulator accumulator) {
            this.key = key;
            this.tid = tid;
            this.start = start;
            this.accumulator = accumulator;
        }

        byte[] encode() {
            byte[] a = AccumulatorCodec.encode(accumulator);
            if (start == SessionStatistics.WHOLE) return a;
            return ByteBuffer.allocate(8 + a.length).putLong(start).put(a).array();
        }
    }

    /** A session in memory: its state, its statistics, and the accumulators it has loaded. */
    private final class Open implements SessionStatistics.Accumulators {
        final String session;
        /** The session's key prefixes, built once: a key per thread's first switch after each flush. */
        final String wholeKeys, windowKeys;
        final AggregateSession state;
        final SessionStatistics statistics;
        final Int2ObjectOpenHashMap<Slot> whole = new Int2ObjectOpenHashMap<>();
        final Int2ObjectOpenHashMap<Slot> window = new Int2ObjectOpenHashMap<>();
        long windowStart = Long.MIN_VALUE;
        final List<Slot> dirty = new ArrayList<>();
        long timestamp;
        /** Taking the batches since the last flush again after a restart: nothing is emitted. */
        boolean replaying;
        /** Skipping batches this state has taken before: one log line for a run of them. */
        boolean skipping;

        /** Accumulators and labels the store may hold that are not in memory: after a restart, or once idle threads left memory. */
        final boolean restored;
        boolean evicted;
        boolean windowMayBeStored;
        final Int2ObjectOpenHashMap<ThreadInfo> labelled = new Int2ObjectOpenHashMap<>();
        /**
         * Threads of the windows closed since the last flush: their window keys go at the next flush,
         * with the whole-session accumulators those windows merged into. Until then a restart finds
         * the window as of the last flush, takes the batches since again, and merges it again.
         */
        final IntArrayList closedWindowThreads = new IntArrayList();
        /** Threads whose open-window key is in the store (not known after a restart: then every key is deleted). */
        final IntOpenHashSet windowStored = new IntOpenHashSet();
        /** Thread records taken since the last flush: written with the accumulators, the latest per thread. */
        final IntOpenHashSet labelsToWrite = new IntOpenHashSet();
        /** Threads whose label is in the store. */
        final IntOpenHashSet labelsStored = new IntOpenHashSet();
        /**
         * Threads whose whole-session accumulator changed since their row went out, and left memory: their row goes out
         * from the store. In memory the slot's flag says it, as a switch sets it (without windows) where a set's lookup per switch would cost.
         */
        final IntOpenHashSet wholeChanged = new IntOpenHashSet();
        /** The batch count when a window last closed (-1: none yet). */
        long batchesAtClose = -1;
        /**
         * Windows close within a quarter of the flush interval: whole-session accumulators of running threads stay in
         * memory, merged at each close and written with the rest, as a store round trip per thread per close would
         * cost more than the statistics (a quarter more CPU for p40.etl in 1 s windows). Else they wait in the store.
         */
        boolean shortWindows;

        Open(String session, AggregateSession state) {
            this.session = session;
            this.wholeKeys = wholePrefix(session);
            this.windowKeys = windowPrefix(session);
            this.state = state;
            this.restored = state.batches > 0;
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
                s = wholeSlot(tid);
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
        Slot wholeSlot(int tid) {
            Slot s = whole.get(tid);
            if (s == null) {
                String key = wholeKeys + tid;
                whole.put(tid, s = restored || evicted ? load(key, tid, SessionStatistics.WHOLE) : fresh(key, tid, SessionStatistics.WHOLE));
                s.changedSinceEmit = wholeChanged.remove(tid);
            }
            return s;
        }

        /** The thread's whole-session accumulator as memory or the store has it, not kept in memory; null when neither has one. */
        ThreadStatsAccumulator wholeAccumulator(int tid) {
            Slot s = whole.get(tid);
            if (s != null) return s.accumulator;
            if (!restored && !evicted) return null;
            byte[] b = store.get(wholeKeys + tid);
            return b == null ? null : AccumulatorCodec.decode(b);
        }

        @Override
        public void windowClosed(long start) {
            // the store has every accumulator written by earlier batches; this batch's are in memory
            Map<Integer, ThreadStatsAccumulator> rows = new LinkedHashMap<>();
            String prefix = windowKeys;
            boolean inMemory = start == windowStart;
            // a window opened in memory is all in memory: the store holds only older windows' keys
            if (!inMemory || windowMayBeStored) try (KeyValueIterator<String, byte[]> it = store.prefixScan(prefix, new org.apache.kafka.common.serialization.StringSerializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    int tid = Integer.parseInt(kv.key.substring(prefix.length()));
                    // one in memory is newer than the stored one: decoding the stored one would be wasted
                    if (windowStartOf(kv.value) == start && !(inMemory && window.containsKey(tid))) {
                        rows.put(tid, windowAccumulator(kv.value));
                    }
                }
            }
            if (inMemory) {
                for (Slot s : window.values()) {
                    rows.put(s.tid, s.accumulator);
                    s.dropped = true;
                }
                window.clear();
                dirty.removeIf(s -> s.dropped);
            }
            // each window accumulator goes as its thread's whole-session one comes from the store: one per thread in memory, not two
            for (Iterator<Map.Entry<Integer, ThreadStatsAccumulator>> it = rows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<Integer, ThreadStatsAccumulator> e = it.next();
                if (!replaying) emit(this, e.getKey(), e.getValue(), start, true);
                of(e.getKey(), SessionStatistics.WHOLE).merge(e.getValue());
                closedWindowThreads.add(e.getKey().intValue());
                it.remove();
            }
            if (!replaying) StageCounters.AGGREGATE.windowsClosed.increment();
            shortWindows = batchesAtClose >= 0 && state.batches - batchesAtClose < flushBatches / 4;
            batchesAtClose = state.batches;
            List<String> old = new ArrayList<>();
            try (KeyValueIterator<String, ThreadStats> it = latest.prefixScan(
                    AggregateTopology.windowRowPrefix(session, start - keepWindows * windowNanos), new org.apache.kafka.common.serialization.StringSerializer())) {
                it.forEachRemaining(kv -> old.add(kv.key));
            }
            old.forEach(k -> StateStores.remove(latest, k));
        }

        @Override
        public void label(io.swapstream.decode.ThreadInfo t) {
            labelled.put(t.threadId(), AvroRecords.of(t));
            // a store write per thread record would cost more than its statistics: written at the flush, as the accumulators
            labelsToWrite.add(t.threadId());
            if (!replaying) state.threads++; // counted the first time round
        }

        private Slot fresh(String key, int tid, long start) {
            return new Slot(key, tid, start, new ThreadStatsAccumulator());
        }

        private Slot load(String key, int tid, long start) {
            byte[] b = store.get(key);
            ThreadStatsAccumulator a;
            if (b == null) a = new ThreadStatsAccumulator();
            else if (start == SessionStatistics.WHOLE) a = AccumulatorCodec.decode(b);
            else if (windowStartOf(b) == start) a = windowAccumulator(b);
            else if (windowStartOf(b) < start) a = new ThreadStatsAccumulator(); // a closed window's, merged, going at the next flush
            else throw new IllegalStateException(key + " holds window " + windowStartOf(b) + ", not the open " + start);
            Slot s = new Slot(key, tid, start, a);
            s.stored = b != null;
            if (b != null && start != SessionStatistics.WHOLE) windowStored.add(tid);
            return s;
        }

        /**
         * Writes every accumulator changed since the last time, and starts a new redo span. A thread
         * that did not run since the last flush leaves memory (the store has it): exited threads
         * pile up over a long session, and memory should follow the threads that run.
         */
        void flush() {
            for (int i = 0; i < closedWindowThreads.size(); i++) {
                int tid = closedWindowThreads.getInt(i);
                Slot open = window.get(tid);
                // else the open window's put below replaces it
                if ((open == null || !open.dirty) && windowKeyMayBeStored(tid)) {
                    StateStores.remove(store, windowKeys + tid);
                    windowStored.remove(tid);
                }
            }
            closedWindowThreads.clear();
            for (Slot s : dirty) {
                if (s.dropped) continue;
                store.put(s.key, s.encode());
                s.stored = true;
                if (s.start != SessionStatistics.WHOLE) windowStored.add(s.tid);
            }
            for (IntIterator it = labelsToWrite.iterator(); it.hasNext(); ) {
                int tid = it.nextInt();
                labels.put(session + "/" + tid, labelled.get(tid));
                labelsStored.add(tid);
            }
            labelsToWrite.clear();
            /*
             * With windows, a whole-session accumulator changes only when a window closes: between closes all of them
             * wait in the store (written above), and a running thread has only its window's in memory; a change not yet
             * emitted is noted. Without windows, or with short ones, those of threads that did not run wait there.
             */
            boolean keepRunning = windowNanos == 0 || shortWindows;
            if (whole.values().removeIf(s -> {
                if (keepRunning && (s.dirty || s.changedSinceEmit || window.containsKey(s.tid))) return false;
                if (s.changedSinceEmit) wholeChanged.add(s.tid);
                return true;
            })) evicted = true;
            for (Slot s : dirty) s.dirty = false;
            dirty.clear();
            for (long i = state.flushedBatches; i < state.batches; i++) StateStores.remove(store, redoKey(session, i));
            state.flushedBatches = state.batches;
            state.redoBytes = 0;
            // what carries over between batches (open window, PMC baselines), as of the accumulators just written
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
            try (DataOutputStream o = new DataOutputStream(bytes)) {
                statistics.writeState(o);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            state.statistics = bytes.toByteArray();
        }

        boolean windowKeyMayBeStored(int tid) {
            return restored || windowStored.contains(tid);
        }

        /** After each record: the session's progress (and, now and then, the accumulators). */
        void save() {
            long since = state.batches - state.flushedBatches;
            // a closed window's threads have their whole-session accumulators in memory until written: at once, unless windows are short
            if (since >= flushBatches || state.redoBytes >= FLUSH_BYTES
                    || (!closedWindowThreads.isEmpty() && (!shortWindows || since >= flushBatches / 4))) flush();
            store.put(session, state.encode());
        }
    }

    static long windowStartOf(byte[] value) { return ByteBuffer.wrap(value).getLong(); }
    static ThreadStatsAccumulator windowAccumulator(byte[] value) { return AccumulatorCodec.decode(Arrays.copyOfRange(value, 8, value.length)); }
    static String wholePrefix(String session) { return session + PART + "t"; }
    /** One key per thread for whichever window is open (the start is in the value): closed windows leave no keys behind. */
    static String windowPrefix(String session) { return session + PART + "w"; }
    /** One of {@value SwapstreamConfig#REDO_SLOTS} slots, deleted at the next flush and reused: the changelog compacts to them. */
    static String redoKey(String session, long batch) { return session + PART + "r" + (batch % SwapstreamConfig.REDO_SLOTS); }
    /** Between a session and the part of its state a key names. */
    static final char PART = '\u0000';

    /** True for a key of a session's accumulators or redo entries (not its progress). */
    public static boolean isPart(String key) { return key.indexOf(PART) >= 0; }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.context = context;
        this.store = context.getStateStore(AggregateTopology.SESSIONS_STORE);
        this.labels = context.getStateStore(AggregateTopology.THREADS_STORE);
        this.latest = context.getStateStore(AggregateTopology.STATS_STORE);
        this.sessionRecords = context.getStateStore(AggregateTopology.SESSION_RECORDS_STORE);
        this.inputs = InputRecordReader.of(context, "aggregate-redo");
        open.clear();
        context.schedule(Duration.ofMillis(emitIntervalMs), PunctuationType.WALL_CLOCK_TIME, now -> emitChanged());
        context.schedule(Duration.ofMillis(retentionLookEvery(retentionMs)), PunctuationType.WALL_CLOCK_TIME, this::forgetEnded);
    }

    /**
     * A tenth of the retention, from a second to 10 minutes: a session stays at most that much longer, and
     * a look takes out the sessions that ended in one such span (each look reads every session's progress).
     */
    static long retentionLookEvery(long retentionMs) {
        return Math.max(1000, Math.min(retentionMs / 10, 600_000));
    }

    /**
     * Ended sessions whose retention has passed leave the stores: their progress, their record, their rows in
     * the stats store (the topic keeps them for the broker's retention). A session ended by a version that
     * did not note when gets its end noted now.
     */
    private void forgetEnded(long now) {
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, TraceSession> it = sessionRecords.all()) {
            while (it.hasNext()) {
                String session = it.next().key;
                if (open.containsKey(session)) continue;
                byte[] value = store.get(session);
                AggregateSession s = value == null ? null : AggregateSession.decode(value);
                if (s == null || !s.done) continue;
                if (s.endedMs <= 0) {
                    s.endedMs = now;
                    store.put(session, s.encode());
                } else if (now - s.endedMs >= retentionMs) {
                    expired.add(session);
                }
            }
        }
        for (String session : expired) {
            List<String> rows = new ArrayList<>();
            try (KeyValueIterator<String, ThreadStats> it = latest.prefixScan(session + "/", new org.apache.kafka.common.serialization.StringSerializer())) {
                it.forEachRemaining(kv -> rows.add(kv.key));
            }
            rows.forEach(k -> StateStores.remove(latest, k));
            StateStores.remove(sessionRecords, session);
            StateStores.remove(store, session);
            StageCounters.AGGREGATE.sessionsForgotten.increment();
            LOG.info("session {} ended more than {} s ago: it left the stores ({} rows)", session, retentionMs / 1000, rows.size());
        }
    }

    @Override
    public void close() {
        open.clear();
        if (inputs != null) inputs.close();
    }

    @Override
    public void process(Record<String, Object> record) {
        aggregate(record);
    }

    private void aggregate(Record<String, Object> record) {
        String session = SessionPartitioner.session(record.key());
        Object v = record.value();
        RecordMetadata m = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record is being processed"));
        Open o = open(session);
        o.timestamp = record.timestamp();
        if (o.state.done) {
            long seq = v instanceof byte[] ? BatchSequence.of(record.headers()) : -1;
            if (seq >= 0 && seq < o.state.nextSequence) {
                StageCounters.AGGREGATE.duplicateBatches.increment(); // sent again, or found in the topic before it came
            } else if (v instanceof byte[]) {
                o.state.lateBatches++;
                store.put(session, o.state.encode());
            }
            return;
        }
        if (v instanceof byte[] bytes) {
            long seq = BatchSequence.of(record.headers());
            boolean known = seq >= 0 && o.state.nextSequence >= 0;
            if (known && seq < o.state.nextSequence) {
                if (!o.skipping) {
                    LOG.warn("session {}: batch {} at {}-{} offset {} was taken before (sent again by a restored decode stage,"
                            + " read again behind the committed state, or found in the topic first): skipped, and any after it"
                            + " that were", session, seq, m.topic(), m.partition(), m.offset());
                }
                o.skipping = true;
                StageCounters.AGGREGATE.duplicateBatches.increment();
                return;
            }
            o.skipping = false;
            if (known && seq > o.state.nextSequence) {
                LOG.error("session {}: batches {} to {} never came to {}-{}: its statistics will miss them",
                        session, o.state.nextSequence, seq - 1, m.topic(), m.partition());
            }
            take(o, m.partition(), m.offset(), record.key(), bytes, seq);
        } else if (v instanceof TraceSession t) {
            if (m.offset() <= o.state.lastSessionRecordOffset) return; // found in the topic before it came
            take(o, t, m.offset());
        } else {
            return;
        }
        o.save();
        if (o.state.allArrived()) finish(o);
    }

    /** Takes the batch at {@code offset} of the switch-batches topic, numbered {@code seq} (-1: not numbered). */
    private void take(Open o, int partition, long offset, String key, byte[] bytes, long seq) {
        o.state.lastBatchPartition = partition;
        o.state.lastBatchOffset = offset;
        if (seq >= 0) o.state.nextSequence = seq + 1;
        SwitchBatch b = read(key, bytes);
        StageCounters.AGGREGATE.switchesIn.add(b.count());
        if (b.count() > 0) StageCounters.AGGREGATE.switchAt(b.timeNanos(b.count() - 1));
        store.put(redoKey(o.session, o.state.batches++), InputRecordReader.reference(partition, offset));
        o.state.redoBytes += bytes.length;
        o.state.host = b.host();
        o.statistics.accept(b);
        o.state.switches += b.count();
    }

    /** Takes a session record, at {@code offset} of the sessions topic: the session's start, or its end with what was sent. */
    private void take(Open o, TraceSession t, long offset) {
        o.state.lastSessionRecordOffset = offset;
        sessionRecords.put(o.session, t);
        if (t.getEndReason() == null) return;
        o.state.expectedSwitches = t.getSwitchCount() == null ? 0 : t.getSwitchCount();
        o.state.expectedThreads = t.getThreadRecords();
        o.state.endReason = t.getEndReason();
        if (o.state.host == null) o.state.host = t.getHost();
    }

    private SwitchBatch read(String key, byte[] bytes) {
        if (batches instanceof SwitchBatchSerde serde) return reused = serde.deserialize(key, bytes, reused);
        return batches.deserialize(key, bytes);
    }

    /** The session in memory, or restored: its state, then the batches since the last flush, again, without output. */
    private Open open(String session) {
        Open o = open.get(session);
        if (o == null) {
            o = new Open(session, AggregateSession.decode(store.get(session)));
            if (!o.state.done) {
                o.replaying = true;
                for (long i = o.state.flushedBatches; i < o.state.batches; i++) {
                    byte[] entry = store.get(redoKey(session, i));
                    if (entry == null) throw new IllegalStateException("batch " + i + " of session " + session + " is missing from the redo store");
                    o.statistics.accept(read(session, inputs.value(batchTopic, entry)));
                }
                o.replaying = false;
                open.put(session, o);
            }
        }
        return o;
    }

    /**
     * Emits the whole-session rows that changed since the last time: a thread's closed windows (its
     * whole-session accumulator) and its open window, together.
     */
    private void emitChanged() {
        for (Open o : open.values()) {
            for (Slot w : o.window.values()) {
                if (!w.changedSinceEmit) continue;
                w.changedSinceEmit = false;
                Slot whole = o.whole.get(w.tid);
                if (whole != null) whole.changedSinceEmit = false;
                o.wholeChanged.remove(w.tid);
                ThreadStatsAccumulator sum = new ThreadStatsAccumulator();
                ThreadStatsAccumulator closed = o.wholeAccumulator(w.tid);
                if (closed != null) sum.merge(closed);
                sum.merge(w.accumulator);
                emit(o, w.tid, sum, null, false);
            }
            for (Slot s : o.whole.values()) {
                if (!s.changedSinceEmit) continue;
                s.changedSinceEmit = false;
                emit(o, s.tid, s.accumulator, null, false);
            }
            for (IntIterator it = o.wholeChanged.iterator(); it.hasNext(); ) {
                int tid = it.nextInt();
                ThreadStatsAccumulator a = o.wholeAccumulator(tid);
                if (a != null) emit(o, tid, a, null, false);
            }
            o.wholeChanged.clear();
        }
    }

    /** Every switch and thread record has arrived: the last window and every whole-session row go out final; the state goes. */
    private void finish(Open o) {
        o.statistics.closeAll();
        for (int i = 0; i < o.closedWindowThreads.size(); i++) {
            int tid = o.closedWindowThreads.getInt(i);
            if (o.windowKeyMayBeStored(tid)) StateStores.remove(store, o.windowKeys + tid);
        }
        o.closedWindowThreads.clear();
        String prefix = o.wholeKeys;
        Map<Integer, ThreadStatsAccumulator> rows = new LinkedHashMap<>();
        IntOpenHashSet stored = new IntOpenHashSet();
        // all in memory unless restored or evicted
        if (o.restored || o.evicted) try (KeyValueIterator<String, byte[]> it = store.prefixScan(prefix, new org.apache.kafka.common.serialization.StringSerializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                int tid = Integer.parseInt(kv.key.substring(prefix.length()));
                stored.add(tid);
                if (!o.whole.containsKey(tid)) rows.put(tid, AccumulatorCodec.decode(kv.value));
            }
        }
        for (Slot s : o.whole.values()) {
            rows.put(s.tid, s.accumulator);
            if (s.stored) stored.add(s.tid);
        }
        for (Map.Entry<Integer, ThreadStatsAccumulator> e : rows.entrySet()) {
            int tid = e.getKey();
            emit(o, tid, e.getValue(), null, true);
            // keys never written need no delete (a tombstone each in the changelog)
            if (stored.contains(tid)) StateStores.remove(store, o.wholeKeys + tid);
        }
        // every label written, threads without a row too; after a restart, whatever the store holds
        if (o.restored) {
            List<String> keys = new ArrayList<>();
            try (KeyValueIterator<String, ThreadInfo> it = labels.prefixScan(o.session + "/", new org.apache.kafka.common.serialization.StringSerializer())) {
                it.forEachRemaining(kv -> keys.add(kv.key));
            }
            keys.forEach(k -> StateStores.remove(labels, k));
        } else {
            for (IntIterator it = o.labelsStored.iterator(); it.hasNext(); ) StateStores.remove(labels, o.session + "/" + it.nextInt());
        }
        for (long i = o.state.flushedBatches; i < o.state.batches; i++) StateStores.remove(store, redoKey(o.session, i));
        o.state.flushedBatches = o.state.batches;
        o.state.redoBytes = 0;
        o.state.done = true;
        o.state.endedMs = context.currentSystemTimeMs();
        o.state.statistics = new byte[0];
        store.put(o.session, o.state.encode());
        open.remove(o.session);
        StageCounters.AGGREGATE.sessionsEnded.increment();
        // the final rows reach read_committed readers now, not up to a commit interval later
        context.commit();
    }

    /** One row: a window's ({@code windowStart} given) or the whole session's (null: first to last switch). */
    private void emit(Open o, int tid, ThreadStatsAccumulator a, Long windowStart, boolean isFinal) {
        String key = ThreadStatsFields.key(o.session, tid, windowStart);
        long start = windowStart != null ? windowStart : a.firstNanos();
        long end = windowStart != null ? windowStart + windowNanos : a.lastNanos();
        ThreadInfo info = o.labelled.get(tid);
        if (info == null && o.restored) info = labels.get(o.session + "/" + tid);
        String host = o.state.host != null ? o.state.host : LogfileHeader.hostOf(o.session);
        ThreadStats stats = a.toStats(o.session, host, tid, info == null ? null : info.getProcessId(),
                info == null ? null : info.getProcessName(), info == null ? null : info.getThreadName(), start, end, isFinal);
        // the store answers queries: whole-session rows and the session's last few windows; the topic has them all
        latest.put(windowStart == null ? key : AggregateTopology.windowRowKey(o.session, windowStart, tid), stats);
        byte[] bytes = rowWriter.serialize(statsTopic, stats);
        StageCounters.AGGREGATE.statsOut.increment();
        context.forward(new Record<>(key, bytes, o.timestamp));
    }
}
