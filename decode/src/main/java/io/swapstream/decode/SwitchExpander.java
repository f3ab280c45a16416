package io.swapstream.decode;

import io.swapstream.schemas.etw.LoggerTiming;
import io.swapstream.schemas.etw.SessionClock;
import io.swapstream.schemas.etw.TraceEvent;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Expands one session's CSwitch events and compact batches into {@link ContextSwitch} records
 * (ETW-FORMATS.md §5, DESIGN.md "Expansion") and merges the processors into time order.
 *
 * <p>Events arrive in buffer order, which is not time order even on one processor: a compact batch
 * is written when it is flushed, after events the processor logged while it was open. So every
 * switch and thread/process event waits in one queue ordered by its own time, and leaves it only
 * once no processor can still produce anything earlier. What a processor can still produce is
 * known from what the logger guarantees ({@link LoggerTiming}): its other events come in time order,
 * its packets come in time order, and nothing reaches the trace later than
 * {@link LoggerTiming#maxWriteDelayTicks} after it happened, which bounds the wait for processors
 * that log nothing. A compact switch also waits for the next switch on its processor, whose old
 * thread is its new thread.
 */
public final class SwitchExpander {
    /** Beyond this many queued items the merge stops waiting, whatever the processors may still write. */
    public static final int DEFAULT_MAX_QUEUED = 1 << 20;

    /** At equal times, events (thread, process) come before switches. */
    private static final int RANK_EVENT = 0;
    private static final int RANK_SWITCH = 1;
    /** Lane.currentTid: a thread came on but its switch was emitted before its id was known. */
    private static final int UNNAMED_THREAD = -2;
    /** readiers: the thread is Ready since it was switched out still runnable (preempted), not readied by anyone. */
    private static final int READY_AT_SWITCH_OUT = -3;

    private final String session;
    private final String host;
    private final SessionClock clock;
    private final int maximumWaitReason;
    private final Consumer<SwitchBatch> out;
    private final Consumer<ThreadInfo> threadsOut;
    private final SwitchBatch batch;
    private final int batchRows;
    private final ThreadDirectory directory;
    private final ExpansionCounters counters = new ExpansionCounters();
    private final int maxQueued;
    /** The logger's bound when batches may be open ({@link LoggerTiming#maxWriteDelayTicks}). */
    private final long batchWriteDelay;
    /** The bound once the session shows it writes CSwitch events, not batches. */
    private final long eventWriteDelay;
    /** How late items actually came: the bound grows to twice that when the logger breaks it. */
    private long observedDelay;
    private final Merge queue = new Merge();
    private final ArrayDeque<Item> free = new ArrayDeque<>();
    /** Each live thread's latest switch-out and ready state (Unix nanoseconds), for its next switch-in. */
    private final ThreadTimes times = new ThreadTimes();
    private Lane[] lanes;
    private long seq;
    /** The latest time any processor has logged. */
    private long frontier = Long.MIN_VALUE;
    /** Items before this time may leave the queue; only grows, as every bound it comes from. */
    private long safeBefore = Long.MIN_VALUE;
    private long lastEmittedTs = Long.MIN_VALUE;
    private boolean sawCompact;
    private boolean sawCSwitch;
    private Lane compactLane;

    /** One queued item: a switch (a compact one possibly waiting for its new thread) or a thread/process event. */
    private static final class Item {
        long ts;
        int rank;
        int cpu;
        long seq;
        boolean complete;
        boolean newThreadUnnamed;
        int source;
        int oldTid;
        int oldPriority;
        int oldState;
        int oldWaitReason;
        int oldWaitMode;
        int newTid;
        int newPriority;
        long newWaitTicks;
        long[] pmc;
        /** A ReadyThread event: the awakened thread (else -1) and the event's flags. */
        int readyTid;
        int readyFlags;
        ThreadEvent thread;
        ProcessEvent process;

        void clear() {
            complete = false;
            newThreadUnnamed = false;
            source = 0;
            oldTid = 0;
            oldPriority = -1;
            oldState = -1;
            oldWaitReason = -1;
            oldWaitMode = -1;
            newTid = -1;
            newPriority = -1;
            newWaitTicks = -1;
            pmc = null;
            readyTid = -1;
            readyFlags = 0;
            thread = null;
            process = null;
        }
    }

    /**
     * The queued items: per processor one first-in-first-out queue per kind (thread/process events,
     * CSwitch events, compact packets), each already in time order as the logger writes it (§1, §5),
     * merged by a small heap over their heads: a few comparisons per item however many wait.
     */
    private static final class Merge {
        /** Per source a ring of items (length a power of two), its head position and count. */
        private Item[][] rings = new Item[0][];
        private int[] head = new int[0];
        private int[] count = new int[0];
        /** Each source's head item's time and sequence, so that comparing sources reads no item. */
        private long[] headTs = new long[0];
        private long[] headSeq = new long[0];
        /** The non-empty sources, a binary heap by their heads. */
        private int[] heap = new int[0];
        private int heapSize;
        private int size;

        static int source(Item it) {
            return it.cpu * 3 + (it.rank == RANK_EVENT ? 0 : it.source == SwitchBatch.SOURCE_CSWITCH ? 1 : 2);
        }

        int size() { return size; }

        void add(Item it) {
            int s = source(it);
            if (s >= rings.length) grow(s + 1);
            Item[] r = rings[s];
            int c = count[s];
            if (c == r.length) r = expand(s);
            r[(head[s] + c) & (r.length - 1)] = it;
            count[s] = c + 1;
            size++;
            if (c == 0) {
                headTs[s] = it.ts;
                headSeq[s] = it.seq;
                heap[heapSize] = s;
                up(heapSize++);
            }
        }

        Item peek() {
            if (heapSize == 0) return null;
            int s = heap[0];
            return rings[s][head[s]];
        }

        Item poll() {
            int s = heap[0];
            Item[] r = rings[s];
            int h = head[s];
            Item it = r[h];
            r[h] = null;
            h = (h + 1) & (r.length - 1);
            head[s] = h;
            size--;
            if (--count[s] == 0) {
                if (--heapSize > 0) {
                    heap[0] = heap[heapSize];
                    down(0);
                }
            } else {
                headTs[s] = r[h].ts;
                headSeq[s] = r[h].seq;
                down(0);
            }
            return it;
        }

        void clear() {
            for (int s = 0; s < rings.length; s++) {
                Arrays.fill(rings[s], null);
                head[s] = 0;
                count[s] = 0;
            }
            heapSize = 0;
            size = 0;
        }

        /** Every item, each source in its order. */
        void forEach(java.util.function.Consumer<Item> c) {
            for (int s = 0; s < rings.length; s++) {
                Item[] r = rings[s];
                for (int k = 0; k < count[s]; k++) c.accept(r[(head[s] + k) & (r.length - 1)]);
            }
        }

        private void grow(int n) {
            int old = rings.length;
            rings = Arrays.copyOf(rings, n);
            for (int i = old; i < n; i++) rings[i] = new Item[64];
            head = Arrays.copyOf(head, n);
            count = Arrays.copyOf(count, n);
            headTs = Arrays.copyOf(headTs, n);
            headSeq = Arrays.copyOf(headSeq, n);
            heap = Arrays.copyOf(heap, n);
        }

        private Item[] expand(int s) {
            Item[] r = rings[s];
            Item[] bigger = new Item[r.length * 2];
            for (int k = 0; k < count[s]; k++) bigger[k] = r[(head[s] + k) & (r.length - 1)];
            head[s] = 0;
            return rings[s] = bigger;
        }

        /** The merge order of the heads of sources a and b: time, events before switches, processor, arrival. */
        private boolean less(int a, int b) {
            long ta = headTs[a];
            long tb = headTs[b];
            if (ta != tb) return ta < tb;
            int ra = a % 3 == 0 ? RANK_EVENT : RANK_SWITCH;
            int rb = b % 3 == 0 ? RANK_EVENT : RANK_SWITCH;
            if (ra != rb) return ra < rb;
            int ca = a / 3;
            int cb = b / 3;
            if (ca != cb) return ca < cb;
            return headSeq[a] < headSeq[b];
        }

        private void up(int i) {
            int[] h = heap;
            int s = h[i];
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!less(s, h[parent])) break;
                h[i] = h[parent];
                i = parent;
            }
            h[i] = s;
        }

        private void down(int i) {
            int[] h = heap;
            int s = h[i];
            int n = heapSize;
            while (true) {
                int l = 2 * i + 1;
                if (l >= n) break;
                int m = l + 1 < n && less(h[l + 1], h[l]) ? l + 1 : l;
                if (!less(h[m], s)) break;
                h[i] = h[m];
                i = m;
            }
            h[i] = s;
        }
    }

    private static final class Lane {
        final int cpu;
        /** The latest time of an event written as it happened (anything but batch packets). */
        long eventTs = Long.MIN_VALUE;
        /** The latest compact packet time. */
        long packetTs = Long.MIN_VALUE;
        /** The last compact switch, waiting for the next one to name its new thread. */
        Item pending;
        // merged-order state: the thread on this processor and when it came on
        int currentTid = -1;
        long currentSinceNanos;

        Lane(int cpu) {
            this.cpu = cpu;
        }
    }

    /** Rows of a full batch, when the caller does not say. */
    public static final int DEFAULT_BATCH_ROWS = 4096;

    /**
     * @param batchWriteDelay session clock ticks within which the logger writes every event when
     *                      batches may be open ({@link LoggerTiming#maxWriteDelayTicks});
     *                      {@link Long#MAX_VALUE} waits for silent processors until the session ends
     * @param eventWriteDelay the same for a session of CSwitch events ({@link LoggerTiming#maxEventWriteDelayTicks})
     * @param out           takes each full batch (and the rest at {@link #flush}); the batch is reused
     * @param threadsOut    takes each thread event's updated info, in time order; may be null
     * @param batchRows     rows in a full batch
     */
    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          long batchWriteDelay, long eventWriteDelay, Consumer<SwitchBatch> out, Consumer<ThreadInfo> threadsOut, int batchRows,
                          int maxQueued) {
        this.session = session;
        this.host = host;
        this.clock = clock;
        this.maximumWaitReason = maximumWaitReason;
        this.out = out;
        this.threadsOut = threadsOut;
        this.batchRows = batchRows;
        this.batch = new SwitchBatch(batchRows).reset(session, host);
        this.directory = new ThreadDirectory(session);
        this.maxQueued = maxQueued;
        this.batchWriteDelay = batchWriteDelay;
        this.eventWriteDelay = eventWriteDelay;
        this.lanes = new Lane[Math.max(1, processors)];
        for (int i = 0; i < lanes.length; i++) lanes[i] = new Lane(i);
    }

    public ExpansionCounters counters() { return counters; }
    public ThreadDirectory directory() { return directory; }

    /** Items waiting in the merge now. */
    public int queued() { return queue.size(); }

    /** Writes the expander's whole state, for {@link #readState}; rows must have been flushed. */
    void writeState(DataOutput o) throws IOException {
        if (!batch.isEmpty()) throw new IllegalStateException("flush the rows before a checkpoint");
        o.writeInt(lanes.length);
        for (Lane l : lanes) {
            o.writeLong(l.eventTs);
            o.writeLong(l.packetTs);
            o.writeLong(l.pending == null ? -1 : l.pending.seq);
            o.writeInt(l.currentTid);
            o.writeLong(l.currentSinceNanos);
        }
        o.writeLong(frontier);
        o.writeInt(queue.size());
        IOException[] failed = new IOException[1];
        queue.forEach(it -> {
            try {
                if (failed[0] == null) writeItem(o, it, frontier);
            } catch (IOException e) {
                failed[0] = e;
            }
        });
        if (failed[0] != null) throw failed[0];
        int outs = 0;
        int readies = 0;
        for (int k = 0; k < times.capacityUsed(); k++) {
            if (!times.live(k)) continue;
            if (times.lastOut[k] != SwitchBatch.NO_TIME) outs++;
            if (times.readyAt[k] != SwitchBatch.NO_TIME) readies++;
        }
        o.writeInt(outs);
        for (int k = 0; k < times.capacityUsed(); k++) {
            if (!times.live(k) || times.lastOut[k] == SwitchBatch.NO_TIME) continue;
            o.writeInt(times.tid[k]);
            o.writeLong(times.lastOut[k]);
        }
        o.writeLong(seq);
        o.writeLong(frontier);
        o.writeLong(safeBefore);
        o.writeLong(lastEmittedTs);
        o.writeBoolean(sawCompact);
        o.writeBoolean(sawCSwitch);
        o.writeLong(observedDelay);
        counters.write(o);
        directory.write(o);
        o.writeInt(readies);
        for (int k = 0; k < times.capacityUsed(); k++) {
            if (!times.live(k) || times.readyAt[k] == SwitchBatch.NO_TIME) continue;
            o.writeInt(times.tid[k]);
            o.writeLong(times.readyAt[k]);
            o.writeInt(times.readier[k]);
            o.writeInt(times.readierProcess[k]);
        }
    }

    /** Reads what {@link #writeState} wrote (checkpoint {@code version}) into this expander, built for the same session. */
    void readState(DataInput in, int version) throws IOException {
        int n = in.readInt();
        lanes = new Lane[n];
        long[] pendingSeq = new long[n];
        for (int i = 0; i < n; i++) {
            Lane l = new Lane(i);
            l.eventTs = in.readLong();
            l.packetTs = in.readLong();
            pendingSeq[i] = in.readLong();
            l.currentTid = in.readInt();
            l.currentSinceNanos = in.readLong();
            lanes[i] = l;
        }
        queue.clear();
        Map<Long, Item> bySeq = new HashMap<>();
        long base = in.readLong();
        for (int q = in.readInt(); q > 0; q--) {
            Item it = readItem(in, base);
            queue.add(it);
            bySeq.put(it.seq, it);
        }
        for (int i = 0; i < n; i++) lanes[i].pending = pendingSeq[i] < 0 ? null : bySeq.get(pendingSeq[i]);
        times.clear();
        for (int k = in.readInt(); k > 0; k--) {
            int slot = times.slotOrNew(in.readInt());
            times.lastOut[slot] = in.readLong();
        }
        seq = in.readLong();
        frontier = in.readLong();
        safeBefore = in.readLong();
        lastEmittedTs = in.readLong();
        sawCompact = in.readBoolean();
        sawCSwitch = in.readBoolean();
        observedDelay = in.readLong();
        counters.read(in, version);
        directory.read(in);
        if (version >= 2) {
            for (int k = in.readInt(); k > 0; k--) {
                int slot = times.slotOrNew(in.readInt());
                times.readyAt[slot] = in.readLong();
                times.readier[slot] = in.readInt();
                times.readierProcess[slot] = in.readInt();
            }
        }
    }

    /** One queued item; times relative to {@code base} and small numbers as varints keep a checkpoint short. */
    private static void writeItem(DataOutput o, Item it, long base) throws IOException {
        int kind = it.thread != null ? 1 : it.process != null ? 2 : it.readyTid >= 0 ? 3 : 0;
        o.writeByte(it.rank | (it.complete ? 2 : 0) | (it.newThreadUnnamed ? 4 : 0) | it.source << 3 | kind << 4);
        StateCodec.varLong(o, it.ts - base);
        StateCodec.varLong(o, it.cpu);
        StateCodec.varLong(o, it.seq);
        if (kind == 0) {
            StateCodec.varLong(o, it.oldTid);
            StateCodec.varLong(o, it.oldPriority);
            StateCodec.varLong(o, it.oldState);
            StateCodec.varLong(o, it.oldWaitReason);
            StateCodec.varLong(o, it.oldWaitMode);
            StateCodec.varLong(o, it.newTid);
            StateCodec.varLong(o, it.newPriority);
            StateCodec.varLong(o, it.newWaitTicks);
            o.writeByte(it.pmc == null ? 0 : it.pmc.length);
            if (it.pmc != null) for (long v : it.pmc) StateCodec.varLong(o, v);
        } else if (kind == 3) {
            StateCodec.varLong(o, it.readyTid);
            o.writeByte(it.readyFlags);
        } else if (kind == 1) {
            ThreadEvent t = it.thread;
            o.writeInt(t.hookId());
            o.writeLong(t.timestamp());
            o.writeInt(t.processId());
            o.writeInt(t.threadId());
            o.writeInt(t.basePriority());
            StateCodec.string(o, t.threadName());
        } else {
            ProcessEvent p = it.process;
            o.writeInt(p.hookId());
            o.writeLong(p.timestamp());
            o.writeInt(p.processId());
            o.writeInt(p.parentId());
            o.writeInt(p.sessionId());
            o.writeInt(p.exitStatus());
            o.writeUTF(p.imageFileName());
            o.writeUTF(p.commandLine());
        }
    }

    private static Item readItem(DataInput in, long base) throws IOException {
        Item it = new Item();
        it.clear();
        int flags = in.readUnsignedByte();
        it.rank = flags & 1;
        it.complete = (flags & 2) != 0;
        it.newThreadUnnamed = (flags & 4) != 0;
        it.source = (flags >> 3) & 1;
        int kind = flags >> 4;
        it.ts = base + StateCodec.varLong(in);
        it.cpu = (int) StateCodec.varLong(in);
        it.seq = StateCodec.varLong(in);
        if (kind == 0) {
            it.oldTid = (int) StateCodec.varLong(in);
            it.oldPriority = (int) StateCodec.varLong(in);
            it.oldState = (int) StateCodec.varLong(in);
            it.oldWaitReason = (int) StateCodec.varLong(in);
            it.oldWaitMode = (int) StateCodec.varLong(in);
            it.newTid = (int) StateCodec.varLong(in);
            it.newPriority = (int) StateCodec.varLong(in);
            it.newWaitTicks = StateCodec.varLong(in);
            int pmc = in.readUnsignedByte();
            if (pmc > 0) {
                it.pmc = new long[pmc];
                for (int k = 0; k < pmc; k++) it.pmc[k] = StateCodec.varLong(in);
            }
        } else if (kind == 3) {
            it.readyTid = (int) StateCodec.varLong(in);
            it.readyFlags = in.readUnsignedByte();
        } else if (kind == 1) {
            it.thread = new ThreadEvent(in.readInt(), in.readLong(), in.readInt(), in.readInt(), in.readInt(), StateCodec.string(in));
        } else {
            it.process = new ProcessEvent(in.readInt(), in.readLong(), in.readInt(), in.readInt(), in.readInt(), in.readInt(),
                    in.readUTF(), in.readUTF());
        }
        return it;
    }

    private Lane lane(int cpu) {
        if (cpu >= lanes.length) {
            Lane[] bigger = Arrays.copyOf(lanes, cpu + 1);
            for (int i = lanes.length; i < bigger.length; i++) bigger[i] = new Lane(i);
            lanes = bigger;
        }
        return lanes[cpu];
    }

    /**
     * Takes one event of the session, in buffer order.
     *
     * @throws MalformedEventException when a switch payload does not fit its layout
     */
    public void onEvent(TraceEvent ev) {
        int hook = ev.hookId();
        Lane lane = lane(ev.processor());
        if (hook == ContextSwap.HOOK_ID) {
            onCSwitch(ev, lane);
        } else if (hook == CompactBatchDecoder.HOOK_ID) {
            onCompactBatch(ev, lane);
        } else if (hook == ReadyThread.HOOK_ID) {
            // under any header type that carries the HookId, as CSwitch (ETW-FORMATS.md §7)
            ReadyThread.check(ev.payloadLength());
            counters.readyEvents++;
            Item it = item(lane, ev.timestamp(), RANK_EVENT);
            it.readyTid = ReadyThread.awakenedThreadId(ev.data(), ev.payloadOffset());
            it.readyFlags = ReadyThread.flags(ev.data(), ev.payloadOffset());
            enqueue(it, true);
        } else if (hook >= 0 && ev.headerType().isSystem()) {
            if (ThreadEvent.handles(hook)) {
                counters.threadEvents++;
                Item it = item(lane, ev.timestamp(), RANK_EVENT);
                it.thread = ThreadEvent.decode(ev);
                enqueue(it, true);
            } else if (ProcessEvent.handles(hook)) {
                counters.processEvents++;
                Item it = item(lane, ev.timestamp(), RANK_EVENT);
                it.process = ProcessEvent.decode(ev);
                enqueue(it, true);
            }
        }
        long ts = ev.timestamp();
        if (ts != Long.MIN_VALUE) {
            // the event itself (a batch's too, at its flush time) was written as it happened
            if (ts > lane.eventTs) lane.eventTs = ts;
            if (ts > frontier) frontier = ts;
        }
    }

    /**
     * Lets out what the merge knows to be next. Called once per buffer, not per event: whether an
     * item may leave depends on every processor, which costs a pass over them.
     */
    public void release() {
        drain(false);
    }

    private void onCSwitch(TraceEvent ev, Lane lane) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        ContextSwap.check(ev.payloadLength());
        counters.cswitchEvents++;
        sawCSwitch = true;
        Item it = item(lane, ev.timestamp(), RANK_SWITCH);
        it.source = SwitchBatch.SOURCE_CSWITCH;
        it.oldTid = ContextSwap.oldThreadId(d, p);
        it.oldPriority = ContextSwap.oldThreadPriority(d, p);
        it.oldState = ContextSwap.oldThreadState(d, p);
        it.oldWaitReason = it.oldState == KernelEnums.STATE_WAITING ? ContextSwap.oldThreadWaitReason(d, p) : -1;
        it.oldWaitMode = ContextSwap.waitMode(d, p);
        it.newTid = ContextSwap.newThreadId(d, p);
        it.newPriority = ContextSwap.newThreadPriority(d, p);
        it.newWaitTicks = ContextSwap.newThreadWaitTime(d, p);
        if (ev.pmcCount() > 0) {
            it.pmc = new long[ev.pmcCount()];
            for (int i = 0; i < it.pmc.length; i++) it.pmc[i] = ev.pmcCounter(i);
        }
        resolvePending(lane, it.oldTid);
        enqueue(it, true);
    }

    private void onCompactBatch(TraceEvent ev, Lane lane) {
        counters.compactBatches++;
        sawCompact = true;
        compactLane = lane;
        CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), maximumWaitReason, this::onPacket);
    }

    private void onPacket(int kind, long ts, int oldTid, int oldPriority, int oldState, int oldWaitReason,
                          int newWaitTime, int tableIndex) {
        switch (kind) {
            case CompactBatchDecoder.IDLE_SHORT, CompactBatchDecoder.IDLE -> counters.idlePackets++;
            case CompactBatchDecoder.LITE -> counters.litePackets++;
            default -> counters.fullPackets++;
        }
        if (tableIndex >= 0 && oldTid == 0) counters.emptyTidTableSlot++;
        Lane lane = compactLane;
        Item it = item(lane, ts, RANK_SWITCH);
        it.source = SwitchBatch.SOURCE_COMPACT;
        it.oldTid = oldTid;
        it.oldPriority = oldPriority;
        it.oldState = oldState;
        it.oldWaitReason = oldWaitReason;
        it.newWaitTicks = newWaitTime;
        resolvePending(lane, oldTid);
        lane.pending = it;
        if (ts > lane.packetTs) lane.packetTs = ts;
        enqueue(it, false);
    }

    /** The new thread of a processor's waiting switch is the old thread of its next switch. */
    private static void resolvePending(Lane lane, int oldTid) {
        Item p = lane.pending;
        if (p != null) {
            p.newTid = oldTid;
            p.complete = true;
            lane.pending = null;
        }
    }

    private Item item(Lane lane, long ts, int rank) {
        // the item freed last is still in cache; the oldest one is not
        Item it = free.pollLast();
        if (it == null) it = new Item();
        it.clear();
        it.ts = ts;
        it.rank = rank;
        it.cpu = lane.cpu;
        it.seq = seq++;
        return it;
    }

    private void enqueue(Item it, boolean complete) {
        it.complete = complete;
        if (it.ts < lastEmittedTs && frontier != Long.MIN_VALUE) {
            // the logger broke the bound (a file session without a flush timer does): it is counted
            // when emitted, and the merge waits twice as long as this item was late from now on
            long late = frontier - it.ts;
            observedDelay = Math.max(observedDelay, late > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * late);
        }
        queue.add(it);
        if (queue.size() > counters.peakQueued) counters.peakQueued = queue.size();
    }

    /** Ends the session: everything left leaves in time order; each processor's last switch keeps an unknown new thread. */
    public void finish() {
        for (Lane lane : lanes) {
            if (lane.pending != null) {
                lane.pending.complete = true;
                lane.pending = null;
                counters.lastSwitchWithoutNewThread++;
            }
        }
        drain(true);
        flush();
    }

    /** Hands over the rows emitted so far, if any, as a (partial) batch. */
    public void flush() {
        if (batch.isEmpty()) return;
        out.accept(batch);
        batch.reset(session, host);
    }

    private void drain(boolean all) {
        Item head;
        // the bounds come from what the trace has shown so far, which draining does not change
        boolean bounded = false;
        long bound = Long.MIN_VALUE;
        while ((head = queue.peek()) != null) {
            if (!all && (head.ts >= safeBefore || !head.complete)) {
                if (!bounded) {
                    bound = writtenBefore();
                    safeBefore = Math.max(safeBefore, safeBefore(bound));
                    bounded = true;
                }
                // an incomplete switch may leave once its processor has written nothing more within
                // the logger's bound: its next switch, which names the new thread, is later than all before it
                boolean ready = head.complete ? head.ts < safeBefore : head.ts < bound;
                if (!ready) {
                    if (queue.size() <= maxQueued) return;
                    counters.queueLimitForced++;
                }
                if (!head.complete) forceOut(head);
            }
            queue.poll();
            emit(lanes[head.cpu], head);
            free.addLast(head);
        }
    }

    /**
     * A ReadyThread event in merged order: the first since the thread's last switch-out sets its
     * ready time (over a runnable switch-out's), readied by the thread then on this processor.
     */
    private void onReady(Lane lane, Item it, long nanos) {
        int s = times.slotOrNew(it.readyTid);
        if (times.readyAt[s] != SwitchBatch.NO_TIME && times.readier[s] != READY_AT_SWITCH_OUT) return;
        times.readyAt[s] = nanos;
        int by = lane.currentTid;
        if ((it.readyFlags & ReadyThread.FLAG_READIED_FROM_DPC) != 0 || by <= 0) {
            times.readier[s] = SwitchBatch.NONE;
            times.readierProcess[s] = SwitchBatch.NONE;
        } else {
            times.readier[s] = by;
            times.readierProcess[s] = directory.processOf(by);
        }
    }

    private void forceOut(Item head) {
        Lane lane = lanes[head.cpu];
        if (lane.pending == head) lane.pending = null;
        head.complete = true;
        head.newThreadUnnamed = true;
        counters.switchesBeforeNewThreadKnown++;
    }

    /** Everything any processor logged before this time is in the trace read so far. */
    private long writtenBefore() {
        // until the session shows which it writes, batches may be open
        long delay = Math.max(sawCSwitch && !sawCompact ? eventWriteDelay : batchWriteDelay, observedDelay);
        if (frontier == Long.MIN_VALUE || delay == Long.MAX_VALUE) return Long.MIN_VALUE;
        return frontier - delay;
    }

    /** The earliest time any processor may still produce an item at. */
    private long safeBefore(long writtenBefore) {
        long min = Long.MAX_VALUE;
        for (Lane l : lanes) {
            long evidence;
            if (sawCompact) evidence = Math.min(l.eventTs, l.packetTs);
            else if (sawCSwitch) evidence = l.eventTs;
            else evidence = Long.MIN_VALUE; // the session's first batch may still hold older packets
            long w = Math.max(evidence, writtenBefore);
            if (w < min) min = w;
        }
        return min;
    }

    private void emit(Lane lane, Item it) {
        if (it.ts < lastEmittedTs) {
            if (it.rank == RANK_SWITCH) counters.emittedOutOfOrder++;
            else counters.lateEvents++;
        }
        lastEmittedTs = Math.max(lastEmittedTs, it.ts);
        long nanos = clock.toUnixNanos(it.ts);
        if (it.thread != null) {
            ThreadInfo info = directory.onThread(it.thread, nanos);
            if (it.thread.isEnd()) {
                times.forget(it.thread.threadId());
            }
            batch.addThread(info);
            if (threadsOut != null) threadsOut.accept(info);
            return;
        }
        if (it.process != null) {
            directory.onProcess(it.process);
            return;
        }
        if (it.readyTid >= 0) {
            onReady(lane, it, nanos);
            return;
        }
        counters.switches++;
        boolean oldIdle = it.oldTid == 0;
        long runNanos = SwitchBatch.NO_TIME;
        if (lane.currentTid >= 0 && lane.currentTid != it.oldTid) {
            counters.oldThreadNotLastSwitchedIn++;
        } else if ((lane.currentTid == it.oldTid || lane.currentTid == UNNAMED_THREAD) && !oldIdle) {
            runNanos = nanos - lane.currentSinceNanos;
        }
        if (!oldIdle) {
            int s = times.slotOrNew(it.oldTid);
            times.lastOut[s] = it.oldState == KernelEnums.STATE_TERMINATED ? SwitchBatch.NO_TIME : nanos;
            // a new wait begins: what readied the thread before is spent
            times.clearReady(s);
            if (KernelEnums.isRunnable(it.oldState)) {
                times.readyAt[s] = nanos;
                times.readier[s] = READY_AT_SWITCH_OUT;
            }
            times.releaseIfEmpty(s);
        }
        int newTid = it.newTid >= 0 && !it.newThreadUnnamed ? it.newTid : SwitchBatch.NONE;
        boolean newIdle = newTid == 0;
        long sinceLast = SwitchBatch.NO_TIME;
        long readyNanos = SwitchBatch.NO_TIME;
        long waitsNanos = SwitchBatch.NO_TIME;
        int readier = SwitchBatch.NONE;
        int readierProcess = SwitchBatch.NONE;
        int s = newTid != SwitchBatch.NONE && !newIdle ? times.slot(newTid) : -1;
        if (s >= 0) {
            long outAt = times.lastOut[s];
            if (outAt != SwitchBatch.NO_TIME) sinceLast = nanos - outAt;
            long readyAt = times.readyAt[s];
            if (readyAt != SwitchBatch.NO_TIME) {
                readyNanos = nanos - readyAt;
                if (outAt != SwitchBatch.NO_TIME) waitsNanos = readyAt - outAt;
                readier = times.readier[s];
                if (readier == READY_AT_SWITCH_OUT) readier = SwitchBatch.NONE;
                else readierProcess = times.readierProcess[s];
                times.clearReady(s);
                times.releaseIfEmpty(s);
            }
        }
        lane.currentTid = newTid != SwitchBatch.NONE ? newTid : it.newThreadUnnamed ? UNNAMED_THREAD : -1;
        lane.currentSinceNanos = nanos;
        boolean cswitch = it.source == SwitchBatch.SOURCE_CSWITCH;
        batch.add(lane.cpu, it.ts, nanos, it.source, it.oldTid,
                oldIdle ? SwitchBatch.NONE : it.oldPriority,
                oldIdle ? SwitchBatch.NONE : it.oldState,
                oldIdle || it.oldWaitReason < 0 ? SwitchBatch.NONE : it.oldWaitReason,
                oldIdle || !cswitch ? SwitchBatch.NONE : it.oldWaitMode,
                newTid,
                cswitch && !newIdle && newTid != SwitchBatch.NONE ? it.newPriority : SwitchBatch.NONE,
                newIdle || it.newWaitTicks < 0 ? SwitchBatch.NO_TIME : it.newWaitTicks,
                it.pmc, sinceLast, runNanos, readyNanos, waitsNanos, readier, readierProcess);
        if (batch.count() >= batchRows) flush();
    }

}
