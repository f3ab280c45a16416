package io.swapstream.decode;

import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.SessionClock;
import io.swapstream.etw.TraceEvent;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Expands one session's CSwitch events and compact batches into {@link ContextSwitch} records
 * (docs/etw-formats.md §5, docs/architecture.md "Expansion") and merges the processors into time order.
 *
 * <p>Events arrive in buffer order, which is not time order even on one processor: a compact batch
 * is written when it is flushed, after events the processor logged while it was open. Nor are the
 * processors in step: a file session writes a processor's buffer only when it is full, so a quiet
 * processor's events come seconds or minutes after later ones of the others. So every switch and
 * thread/process event waits in one queue ordered by its own time, and leaves it only once no
 * processor can still produce anything earlier. That is known from two things. A processor's own
 * buffers: its other events come in time order, and so do its packets. And how late buffers come
 * ({@link BufferLateness}): a finished file has shown it whole ({@link MergeLimits#finishedFile}), so
 * everything more than that older than the latest event read is in. A live session has not shown
 * its future, so it waits for every processor's own buffers; only its maximum lateness or the memory
 * cap ({@link MergeLimits}; a finished file has only the cap) let items out sooner, and a switch that
 * then comes after later ones is counted and has no derived times.
 * A compact switch also waits for the next switch on its processor, whose old thread is its new thread.
 */
public final class SwitchExpander {
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
    /** Beyond this many queued items the merge stops waiting, whatever the processors may still write. */
    private final int maxQueued;
    private final MergeLimits limits;
    /** A live session's limit, in clock ticks; {@link Long#MAX_VALUE} for none. */
    private final long maxLatenessTicks;
    /** How late this session's buffers have come so far. */
    private BufferLateness lateness = new BufferLateness();
    private final Merge queue = new Merge();
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

    /** Merge.kind of an item in a processor's event queue; switches are kind 0. */
    private static final int KIND_SWITCH = 0;
    private static final int KIND_THREAD = 1;
    private static final int KIND_PROCESS = 2;
    private static final int KIND_READY = 3;

    /**
     * The queued items: per processor one first-in-first-out queue per kind (thread, process and
     * ReadyThread events; CSwitch events; compact packets), each already in time order as the logger
     * writes it (§1, §5), merged by a small heap over their heads: a few comparisons per item however
     * many wait. Each queue is a ring held in columns, not an object per item: the merge reads the
     * rings front to back, which the processor's prefetcher follows, where objects scattered over the
     * heap cost a cache miss each. A ReadyThread event keeps its awakened thread in {@code oldTid}
     * and its flags in {@code oldState}.
     */
    private static final class Merge {
        int[] head = new int[0];
        int[] count = new int[0];
        long[][] ts = new long[0][];
        long[][] seq = new long[0][];
        /** bit 0 complete, bit 1 new thread emitted unnamed, bits 2-3 kind. */
        byte[][] flags = new byte[0][];
        int[][] oldTid = new int[0][];
        int[][] oldPriority = new int[0][];
        int[][] oldState = new int[0][];
        int[][] oldWaitReason = new int[0][];
        int[][] oldWaitMode = new int[0][];
        int[][] newTid = new int[0][];
        int[][] newPriority = new int[0][];
        long[][] newWaitTicks = new long[0][];
        long[][][] pmc = new long[0][][];
        Object[][] event = new Object[0][];
        /** Each source's head item's time and sequence, so that comparing sources reads no ring. */
        private long[] headTs = new long[0];
        private long[] headSeq = new long[0];
        /** The non-empty sources, a binary heap by their heads. */
        private int[] heap = new int[0];
        private int heapSize;
        private int size;

        static int source(int cpu, int rank, int switchSource) {
            return rank == RANK_EVENT ? events(cpu) : switchSource == SwitchBatch.SOURCE_CSWITCH ? cswitches(cpu) : packets(cpu);
        }

        /** A processor's queue of thread, process and ReadyThread events. */
        static int events(int cpu) { return cpu * 3; }
        /** A processor's queue of CSwitch events. */
        static int cswitches(int cpu) { return cpu * 3 + 1; }
        /** A processor's queue of compact packets. */
        static int packets(int cpu) { return cpu * 3 + 2; }

        static int cpu(int source) { return source / 3; }
        static boolean isEvent(int source) { return source % 3 == 0; }
        static int switchSource(int source) { return source % 3 == 1 ? SwitchBatch.SOURCE_CSWITCH : SwitchBatch.SOURCE_COMPACT; }

        int size() { return size; }

        int mask(int s) { return ts[s].length - 1; }

        /** Appends an item to source {@code s}; returns its position, whose other columns the caller fills. */
        int push(int s, long t, long sq, int kind, boolean complete) {
            if (s >= ts.length) grow(s + 1);
            int c = count[s];
            if (c == ts[s].length) expand(s);
            int p = (head[s] + c) & mask(s);
            ts[s][p] = t;
            seq[s][p] = sq;
            flags[s][p] = (byte) ((complete ? 1 : 0) | kind << 2);
            pmc[s][p] = null;
            event[s][p] = null;
            count[s] = c + 1;
            size++;
            if (c == 0) {
                headTs[s] = t;
                headSeq[s] = sq;
                heap[heapSize] = s;
                up(heapSize++);
            }
            return p;
        }

        /** The source whose head comes next, or -1. */
        int peek() {
            return heapSize == 0 ? -1 : heap[0];
        }

        int headPosition(int s) { return head[s]; }

        int tailPosition(int s) { return (head[s] + count[s] - 1) & mask(s); }

        /** Removes the next item (read it first: its event and counters are let go). */
        void pop() {
            int s = heap[0];
            int h = head[s];
            event[s][h] = null;
            pmc[s][h] = null;
            h = (h + 1) & mask(s);
            head[s] = h;
            size--;
            if (--count[s] == 0) {
                if (--heapSize > 0) {
                    heap[0] = heap[heapSize];
                    down(0);
                }
            } else {
                headTs[s] = ts[s][h];
                headSeq[s] = seq[s][h];
                down(0);
            }
        }

        void clear() {
            for (int s = 0; s < ts.length; s++) {
                Arrays.fill(event[s], null);
                Arrays.fill(pmc[s], null);
                head[s] = 0;
                count[s] = 0;
            }
            heapSize = 0;
            size = 0;
        }

        interface Visitor {
            void visit(int source, int position) throws IOException;
        }

        /** Every item, each source in its order. */
        void forEach(Visitor v) throws IOException {
            for (int s = 0; s < ts.length; s++) {
                for (int k = 0; k < count[s]; k++) v.visit(s, (head[s] + k) & mask(s));
            }
        }

        private void grow(int n) {
            int old = ts.length;
            head = Arrays.copyOf(head, n);
            count = Arrays.copyOf(count, n);
            ts = Arrays.copyOf(ts, n);
            seq = Arrays.copyOf(seq, n);
            flags = Arrays.copyOf(flags, n);
            oldTid = Arrays.copyOf(oldTid, n);
            oldPriority = Arrays.copyOf(oldPriority, n);
            oldState = Arrays.copyOf(oldState, n);
            oldWaitReason = Arrays.copyOf(oldWaitReason, n);
            oldWaitMode = Arrays.copyOf(oldWaitMode, n);
            newTid = Arrays.copyOf(newTid, n);
            newPriority = Arrays.copyOf(newPriority, n);
            newWaitTicks = Arrays.copyOf(newWaitTicks, n);
            pmc = Arrays.copyOf(pmc, n);
            event = Arrays.copyOf(event, n);
            headTs = Arrays.copyOf(headTs, n);
            headSeq = Arrays.copyOf(headSeq, n);
            heap = Arrays.copyOf(heap, n);
            for (int s = old; s < n; s++) allocate(s, 64);
        }

        private void allocate(int s, int n) {
            ts[s] = new long[n];
            seq[s] = new long[n];
            flags[s] = new byte[n];
            oldTid[s] = new int[n];
            oldPriority[s] = new int[n];
            oldState[s] = new int[n];
            oldWaitReason[s] = new int[n];
            oldWaitMode[s] = new int[n];
            newTid[s] = new int[n];
            newPriority[s] = new int[n];
            newWaitTicks[s] = new long[n];
            pmc[s] = new long[n][];
            event[s] = new Object[n];
        }

        /** Doubles ring {@code s}, its items moved to the front in order. */
        private void expand(int s) {
            int n = ts[s].length;
            int h = head[s];
            int c = count[s];
            long[] t = ts[s], q = seq[s], w = newWaitTicks[s];
            byte[] f = flags[s];
            int[] a = oldTid[s], b = oldPriority[s], st = oldState[s], r = oldWaitReason[s], m = oldWaitMode[s], nt = newTid[s],
                    np = newPriority[s];
            long[][] pm = pmc[s];
            Object[] ev = event[s];
            allocate(s, n * 2);
            for (int k = 0; k < c; k++) {
                int from = (h + k) & (n - 1);
                ts[s][k] = t[from];
                seq[s][k] = q[from];
                flags[s][k] = f[from];
                oldTid[s][k] = a[from];
                oldPriority[s][k] = b[from];
                oldState[s][k] = st[from];
                oldWaitReason[s][k] = r[from];
                oldWaitMode[s][k] = m[from];
                newTid[s][k] = nt[from];
                newPriority[s][k] = np[from];
                newWaitTicks[s][k] = w[from];
                pmc[s][k] = pm[from];
                event[s][k] = ev[from];
            }
            head[s] = 0;
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
        /** The last compact switch waits for the next one to name its new thread: always its compact queue's newest item. */
        boolean pending;
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
     * @param limits        what the merge may wait for: a finished file's lateness, or a live session's limits
     * @param out           takes each full batch (and the rest at {@link #flush}); the batch is reused
     * @param threadsOut    takes each thread event's updated info, in time order; may be null
     * @param batchRows     rows in a full batch
     */
    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          MergeLimits limits, Consumer<SwitchBatch> out, Consumer<ThreadInfo> threadsOut, int batchRows) {
        this.session = session;
        this.host = host;
        this.clock = clock;
        this.maximumWaitReason = maximumWaitReason;
        this.out = out;
        this.threadsOut = threadsOut;
        this.batchRows = batchRows;
        this.batch = new SwitchBatch(batchRows).reset(session, host)
                .clock(clock.baseTimestamp(), clock.baseNanos(), clock.ticksPerSecond());
        this.directory = new ThreadDirectory(session);
        this.limits = limits;
        this.maxQueued = limits.maxQueued();
        this.maxLatenessTicks = limits.finishedFile() ? Long.MAX_VALUE : limits.maxLatenessTicks(clock.ticksPerSecond());
        this.lanes = new Lane[Math.max(1, processors)];
        for (int i = 0; i < lanes.length; i++) lanes[i] = new Lane(i);
    }

    public ExpansionCounters counters() { return counters; }
    public ThreadDirectory directory() { return directory; }

    /** Items waiting in the merge now. */
    public int queued() { return queue.size(); }

    /** The largest lateness of the session's buffers so far, in clock ticks. */
    public long maxLatenessTicks() { return lateness.max(); }

    /** The time of the latest switch emitted, in clock ticks; {@link Long#MIN_VALUE} before any. */
    public long lastEmittedTimestamp() { return lastEmittedTs; }

    /** Writes the expander's whole state, for {@link #readState}; rows must have been flushed. */
    void writeState(DataOutput o) throws IOException {
        if (!batch.isEmpty()) throw new IllegalStateException("flush the rows before a checkpoint");
        o.writeInt(lanes.length);
        for (Lane l : lanes) {
            o.writeLong(l.eventTs);
            o.writeLong(l.packetTs);
            int compact = Merge.packets(l.cpu);
            o.writeLong(l.pending ? queue.seq[compact][queue.tailPosition(compact)] : -1);
            o.writeInt(l.currentTid);
            o.writeLong(l.currentSinceNanos);
        }
        o.writeLong(frontier);
        o.writeInt(queue.size());
        long base = frontier;
        queue.forEach((src, p) -> writeItem(o, queue, src, p, base));
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
        o.writeLong(lateness.max());
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

    /** Reads what {@link #writeState} wrote into this expander, built for the same session. */
    void readState(DataInput in) throws IOException {
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
        long base = in.readLong();
        for (int q = in.readInt(); q > 0; q--) readItem(in, base);
        for (int i = 0; i < n; i++) {
            int compact = Merge.packets(i);
            lanes[i].pending = pendingSeq[i] >= 0 && compact < queue.ts.length && queue.count[compact] > 0
                    && queue.seq[compact][queue.tailPosition(compact)] == pendingSeq[i];
        }
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
        lateness = BufferLateness.resume(frontier, in.readLong());
        counters.read(in);
        directory.read(in);
        for (int k = in.readInt(); k > 0; k--) {
            int slot = times.slotOrNew(in.readInt());
            times.readyAt[slot] = in.readLong();
            times.readier[slot] = in.readInt();
            times.readierProcess[slot] = in.readInt();
        }
    }

    /** One queued item; times relative to {@code base} and small numbers as varints keep a checkpoint short. */
    private static void writeItem(DataOutput o, Merge m, int src, int p, long base) throws IOException {
        int f = m.flags[src][p];
        int kind = f >> 2;
        boolean event = Merge.isEvent(src);
        int rank = event ? RANK_EVENT : RANK_SWITCH;
        int source = event ? 0 : Merge.switchSource(src);
        o.writeByte(rank | (f & 1) << 1 | (f & 2) << 1 | source << 3 | kind << 4);
        StateCodec.varLong(o, m.ts[src][p] - base);
        StateCodec.varLong(o, Merge.cpu(src));
        StateCodec.varLong(o, m.seq[src][p]);
        if (kind == KIND_SWITCH) {
            StateCodec.varLong(o, m.oldTid[src][p]);
            StateCodec.varLong(o, m.oldPriority[src][p]);
            StateCodec.varLong(o, m.oldState[src][p]);
            StateCodec.varLong(o, m.oldWaitReason[src][p]);
            StateCodec.varLong(o, m.oldWaitMode[src][p]);
            StateCodec.varLong(o, m.newTid[src][p]);
            StateCodec.varLong(o, m.newPriority[src][p]);
            StateCodec.varLong(o, m.newWaitTicks[src][p]);
            long[] pmc = m.pmc[src][p];
            o.writeByte(pmc == null ? 0 : pmc.length);
            if (pmc != null) for (long v : pmc) StateCodec.varLong(o, v);
        } else if (kind == KIND_READY) {
            StateCodec.varLong(o, m.oldTid[src][p]);
            o.writeByte(m.oldState[src][p]);
        } else if (kind == KIND_THREAD) {
            ThreadEvent t = (ThreadEvent) m.event[src][p];
            o.writeInt(t.hookId());
            o.writeLong(t.timestamp());
            o.writeInt(t.processId());
            o.writeInt(t.threadId());
            o.writeInt(t.basePriority());
            StateCodec.string(o, t.threadName());
        } else {
            ProcessEvent e = (ProcessEvent) m.event[src][p];
            o.writeInt(e.hookId());
            o.writeLong(e.timestamp());
            o.writeInt(e.processId());
            o.writeInt(e.parentId());
            o.writeInt(e.sessionId());
            o.writeInt(e.exitStatus());
            o.writeUTF(e.imageFileName());
            o.writeUTF(e.commandLine());
        }
    }

    private void readItem(DataInput in, long base) throws IOException {
        int f = in.readUnsignedByte();
        int rank = f & 1;
        boolean complete = (f & 2) != 0;
        boolean unnamed = (f & 4) != 0;
        int source = (f >> 3) & 1;
        int kind = f >> 4;
        long t = base + StateCodec.varLong(in);
        int cpu = (int) StateCodec.varLong(in);
        long sq = StateCodec.varLong(in);
        int src = Merge.source(cpu, rank, source);
        int p = queue.push(src, t, sq, kind, complete);
        Merge m = queue;
        if (unnamed) m.flags[src][p] |= 2;
        if (kind == KIND_SWITCH) {
            m.oldTid[src][p] = (int) StateCodec.varLong(in);
            m.oldPriority[src][p] = (int) StateCodec.varLong(in);
            m.oldState[src][p] = (int) StateCodec.varLong(in);
            m.oldWaitReason[src][p] = (int) StateCodec.varLong(in);
            m.oldWaitMode[src][p] = (int) StateCodec.varLong(in);
            m.newTid[src][p] = (int) StateCodec.varLong(in);
            m.newPriority[src][p] = (int) StateCodec.varLong(in);
            m.newWaitTicks[src][p] = StateCodec.varLong(in);
            int pmc = in.readUnsignedByte();
            if (pmc > 0) {
                long[] c = new long[pmc];
                for (int k = 0; k < pmc; k++) c[k] = StateCodec.varLong(in);
                m.pmc[src][p] = c;
            }
        } else if (kind == KIND_READY) {
            m.oldTid[src][p] = (int) StateCodec.varLong(in);
            m.oldState[src][p] = in.readUnsignedByte();
        } else if (kind == KIND_THREAD) {
            m.event[src][p] = new ThreadEvent(in.readInt(), in.readLong(), in.readInt(), in.readInt(), in.readInt(), StateCodec.string(in));
        } else {
            m.event[src][p] = new ProcessEvent(in.readInt(), in.readLong(), in.readInt(), in.readInt(), in.readInt(), in.readInt(),
                    in.readUTF(), in.readUTF());
        }
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
        lateness.onEvent(ev);
        int hook = ev.hookId();
        Lane lane = lane(ev.processor());
        if (hook == ContextSwap.HOOK_ID) {
            onCSwitch(ev, lane);
        } else if (hook == CompactBatchDecoder.HOOK_ID) {
            onCompactBatch(ev, lane);
        } else if (hook == ReadyThread.HOOK_ID) {
            // under any header type that carries the HookId, as CSwitch (docs/etw-formats.md §7)
            ReadyThread.check(ev.payloadLength());
            counters.readyEvents++;
            int src = Merge.events(lane.cpu);
            int p = enqueue(src, ev.timestamp(), KIND_READY, true);
            queue.oldTid[src][p] = ReadyThread.awakenedThreadId(ev.data(), ev.payloadOffset());
            queue.oldState[src][p] = ReadyThread.flags(ev.data(), ev.payloadOffset());
        } else if (hook >= 0 && ev.headerType().isSystem()) {
            if (ThreadEvent.handles(hook)) {
                counters.threadEvents++;
                ThreadEvent t = ThreadEvent.decode(ev);
                int src = Merge.events(lane.cpu);
                int q = enqueue(src, ev.timestamp(), KIND_THREAD, true);
                queue.event[src][q] = t; // after enqueue, which may grow the columns
            } else if (ProcessEvent.handles(hook)) {
                counters.processEvents++;
                ProcessEvent e = ProcessEvent.decode(ev);
                int src = Merge.events(lane.cpu);
                int q = enqueue(src, ev.timestamp(), KIND_PROCESS, true);
                queue.event[src][q] = e;
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
     * Ends the buffer of processor {@code cpu} whose events were just taken, and lets out what the
     * merge knows to be next. Once per buffer, not per event: lateness is a buffer's, and whether an
     * item may leave depends on every processor, which costs a pass over them.
     */
    public void release(int cpu) {
        lateness.endBuffer(cpu);
        drain(false);
    }

    private void onCSwitch(TraceEvent ev, Lane lane) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        ContextSwap.check(ev.payloadLength());
        counters.cswitchEvents++;
        sawCSwitch = true;
        resolvePending(lane, ContextSwap.oldThreadId(d, p));
        int src = Merge.cswitches(lane.cpu);
        int q = enqueue(src, ev.timestamp(), KIND_SWITCH, true);
        Merge m = queue;
        int state = ContextSwap.oldThreadState(d, p);
        m.oldTid[src][q] = ContextSwap.oldThreadId(d, p);
        m.oldPriority[src][q] = ContextSwap.oldThreadPriority(d, p);
        m.oldState[src][q] = state;
        m.oldWaitReason[src][q] = state == KernelEnums.STATE_WAITING ? ContextSwap.oldThreadWaitReason(d, p) : -1;
        m.oldWaitMode[src][q] = ContextSwap.waitMode(d, p);
        m.newTid[src][q] = ContextSwap.newThreadId(d, p);
        m.newPriority[src][q] = ContextSwap.newThreadPriority(d, p);
        m.newWaitTicks[src][q] = ContextSwap.newThreadWaitTime(d, p);
        if (ev.pmcCount() > 0) {
            long[] c = new long[ev.pmcCount()];
            for (int i = 0; i < c.length; i++) c[i] = ev.pmcCounter(i);
            m.pmc[src][q] = c;
        }
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
        resolvePending(lane, oldTid);
        int src = Merge.packets(lane.cpu);
        int q = enqueue(src, ts, KIND_SWITCH, false);
        Merge m = queue;
        m.oldTid[src][q] = oldTid;
        m.oldPriority[src][q] = oldPriority;
        m.oldState[src][q] = oldState;
        m.oldWaitReason[src][q] = oldWaitReason;
        m.oldWaitMode[src][q] = -1;
        m.newTid[src][q] = -1;
        m.newPriority[src][q] = -1;
        m.newWaitTicks[src][q] = newWaitTime;
        lane.pending = true;
        if (ts > lane.packetTs) lane.packetTs = ts;
    }

    /** The new thread of a processor's waiting switch is the old thread of its next switch. */
    private void resolvePending(Lane lane, int oldTid) {
        if (!lane.pending) return;
        int src = Merge.packets(lane.cpu);
        int p = queue.tailPosition(src);
        queue.newTid[src][p] = oldTid;
        queue.flags[src][p] |= 1;
        lane.pending = false;
    }

    /** Queues an item at time {@code t} on source {@code src}; returns its position for the caller to fill. */
    private int enqueue(int src, long t, int kind, boolean complete) {
        int p = queue.push(src, t, seq++, kind, complete);
        if (queue.size() > counters.peakQueued) counters.peakQueued = queue.size();
        return p;
    }

    /** Ends the session: everything left leaves in time order; each processor's last switch keeps an unknown new thread. */
    public void finish() {
        for (Lane lane : lanes) {
            if (lane.pending) {
                int src = Merge.packets(lane.cpu);
                queue.flags[src][queue.tailPosition(src)] |= 1;
                lane.pending = false;
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
        int src;
        // the bounds come from what the trace has shown so far, which draining does not change
        boolean bounded = false;
        long forcedBefore = Long.MIN_VALUE;
        Merge m = queue;
        while ((src = m.peek()) >= 0) {
            int p = m.headPosition(src);
            long t = m.ts[src][p];
            boolean complete = (m.flags[src][p] & 1) != 0;
            if (!all && (t >= safeBefore || !complete)) {
                if (!bounded) {
                    safeBefore = Math.max(safeBefore, safeBefore(writtenBefore()));
                    forcedBefore = maxLatenessTicks == Long.MAX_VALUE || frontier == Long.MIN_VALUE
                            ? Long.MIN_VALUE : frontier - maxLatenessTicks;
                    bounded = true;
                }
                // an incomplete switch waits for the next switch on its processor, which names its new thread:
                // that switch opens the processor's next batch, which a file session writes as late as any
                if (!complete || t >= safeBefore) {
                    if (t < forcedBefore) {
                        counters.latenessLimitForced++;
                    } else if (m.size() > maxQueued) {
                        counters.queueLimitForced++;
                    } else {
                        return;
                    }
                }
                if (!complete) forceOut(src, p);
            }
            emit(lanes[Merge.cpu(src)], src, p);
            m.pop();
        }
    }

    /**
     * A ReadyThread event in merged order: the first since the thread's last switch-out sets its
     * ready time (over a runnable switch-out's), readied by the thread then on this processor.
     */
    private void onReady(Lane lane, int tid, int flags, long nanos) {
        int s = times.slotOrNew(tid);
        if (times.readyAt[s] != SwitchBatch.NO_TIME && times.readier[s] != READY_AT_SWITCH_OUT) return;
        times.readyAt[s] = nanos;
        int by = lane.currentTid;
        if ((flags & ReadyThread.FLAG_READIED_FROM_DPC) != 0 || by <= 0) {
            times.readier[s] = SwitchBatch.NONE;
            times.readierProcess[s] = SwitchBatch.NONE;
        } else {
            times.readier[s] = by;
            times.readierProcess[s] = directory.processOf(by);
        }
    }

    /** The switch at the head of {@code src} leaves before its new thread is known: the lane's pending one. */
    private void forceOut(int src, int p) {
        lanes[Merge.cpu(src)].pending = false;
        queue.flags[src][p] |= 1 | 2;
        counters.switchesBeforeNewThreadKnown++;
    }

    /**
     * Everything any processor logged before this time is in the trace read so far: in a finished
     * file, its lateness before the latest event read. A live session has not shown its future: a
     * quiet processor's first buffer is the one that comes later than all before it (a processor idle
     * 40 s came 43 s late where the others had been under 1 s), so only the processors' own buffers tell.
     */
    private long writtenBefore() {
        if (frontier == Long.MIN_VALUE || !limits.finishedFile()) return Long.MIN_VALUE;
        long w = frontier - limits.fileLatenessTicks();
        return w > frontier ? Long.MIN_VALUE : w; // past the clock's start
    }

    /**
     * The earliest time any processor may still produce an item at: what its own buffers show, or
     * in a finished file what its lateness shows, whichever is later.
     */
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

    /**
     * Emits the item at the head of {@code src}. A switch that came after later ones were emitted (a
     * live session's limits let those out first) keeps its fields as logged but gets no derived times,
     * which would measure against state that has moved past it and could be negative, and it changes
     * no processor's or thread's state, so the switches after it stay right.
     */
    private void emit(Lane lane, int src, int p) {
        Merge m = queue;
        long t = m.ts[src][p];
        boolean event = Merge.isEvent(src);
        boolean late = t < lastEmittedTs;
        long nanos = clock.toUnixNanos(t);
        if (event) {
            if (late) counters.lateEvents++;
            int kind = m.flags[src][p] >> 2;
            if (kind == KIND_READY) {
                // a late ReadyThread event would date a wait before the switch-out that began it
                if (!late) onReady(lane, m.oldTid[src][p], m.oldState[src][p], nanos);
            } else if (kind == KIND_THREAD) {
                ThreadEvent te = (ThreadEvent) m.event[src][p];
                ThreadInfo info = directory.onThread(te, nanos);
                if (te.isEnd()) times.forget(te.threadId());
                batch.addThread(info);
                if (threadsOut != null) threadsOut.accept(info);
            } else {
                directory.onProcess((ProcessEvent) m.event[src][p]);
            }
            lastEmittedTs = Math.max(lastEmittedTs, t);
            return;
        }
        if (late) counters.switchesOutOfOrder++;
        lastEmittedTs = Math.max(lastEmittedTs, t);
        counters.switches++;
        int oldTid = m.oldTid[src][p];
        int oldState = m.oldState[src][p];
        boolean oldIdle = oldTid == 0;
        long runNanos = SwitchBatch.NO_TIME;
        if (late) {
            // no state: left as it is
        } else if (lane.currentTid >= 0 && lane.currentTid != oldTid) {
            counters.oldThreadNotLastSwitchedIn++;
        } else if ((lane.currentTid == oldTid || lane.currentTid == UNNAMED_THREAD) && !oldIdle) {
            runNanos = nanos - lane.currentSinceNanos;
        }
        if (!oldIdle && !late) {
            int s = times.slotOrNew(oldTid);
            times.lastOut[s] = oldState == KernelEnums.STATE_TERMINATED ? SwitchBatch.NO_TIME : nanos;
            // a new wait begins: what readied the thread before is spent
            times.clearReady(s);
            if (KernelEnums.isRunnable(oldState)) {
                times.readyAt[s] = nanos;
                times.readier[s] = READY_AT_SWITCH_OUT;
            }
            times.releaseIfEmpty(s);
        }
        boolean unnamed = (m.flags[src][p] & 2) != 0;
        int recordedNew = m.newTid[src][p];
        int newTid = recordedNew >= 0 && !unnamed ? recordedNew : SwitchBatch.NONE;
        boolean newIdle = newTid == 0;
        long sinceLast = SwitchBatch.NO_TIME;
        long readyNanos = SwitchBatch.NO_TIME;
        long waitsNanos = SwitchBatch.NO_TIME;
        int readier = SwitchBatch.NONE;
        int readierProcess = SwitchBatch.NONE;
        int s = newTid != SwitchBatch.NONE && !newIdle && !late ? times.slot(newTid) : -1;
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
        if (!late) {
            lane.currentTid = newTid != SwitchBatch.NONE ? newTid : unnamed ? UNNAMED_THREAD : -1;
            lane.currentSinceNanos = nanos;
        }
        int source = Merge.switchSource(src);
        boolean cswitch = source == SwitchBatch.SOURCE_CSWITCH;
        int reason = m.oldWaitReason[src][p];
        long ticks = m.newWaitTicks[src][p];
        batch.add(lane.cpu, t, nanos, source, oldTid,
                oldIdle ? SwitchBatch.NONE : m.oldPriority[src][p],
                oldIdle ? SwitchBatch.NONE : oldState,
                oldIdle || reason < 0 ? SwitchBatch.NONE : reason,
                oldIdle || !cswitch ? SwitchBatch.NONE : m.oldWaitMode[src][p],
                newTid,
                cswitch && !newIdle && newTid != SwitchBatch.NONE ? m.newPriority[src][p] : SwitchBatch.NONE,
                newIdle || ticks < 0 ? SwitchBatch.NO_TIME : ticks,
                m.pmc[src][p], sinceLast, runNanos, readyNanos, waitsNanos, readier, readierProcess);
        if (batch.count() >= batchRows) flush();
    }
}
