package io.swapstream.decode.merge;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.decode.event.LabelEvent;
import io.swapstream.decode.event.ReadyThread;
import java.util.Arrays;

/**
 * The items waiting in a session's merge: per processor one first-in-first-out queue per source
 * (its thread, process and ReadyThread events; its CSwitch events; its compact packets), each in
 * time order as the logger writes it (docs/etw-formats.md §1, §5), merged by a small heap over their
 * heads: a few comparisons per item however many wait.
 *
 * <p>Each queue is a ring held in columns, not an object per item: the merge reads the rings front
 * to back, which the processor's prefetcher follows, where objects scattered over the heap would cost
 * a cache miss each. An item is one of three kinds: a switch (the switch columns), a ReadyThread
 * event ({@link #awakened} and {@link #readyFlags}, kept in the old-thread columns), or a
 * {@link LabelEvent} (the {@link #label} column).
 */
final class MergeQueue {
    static final int KIND_SWITCH = 0;
    static final int KIND_LABEL = 1;
    static final int KIND_READY = 2;
    /** At equal times, events come before switches. */
    static final int RANK_EVENT = 0;
    static final int RANK_SWITCH = 1;

    private static final int FLAG_COMPLETE = 1;
    private static final int FLAG_UNNAMED = 2;

    int[] head = new int[0];
    int[] count = new int[0];
    long[][] ts = new long[0][];
    long[][] seq = new long[0][];
    /** Bit 0 complete, bit 1 new thread emitted unnamed, bits 2-3 kind. */
    byte[][] flags = new byte[0][];
    int[][] oldTid = new int[0][];
    int[][] oldPriority = new int[0][];
    int[][] oldState = new int[0][];
    int[][] oldWaitReason = new int[0][];
    int[][] oldWaitMode = new int[0][];
    int[][] newTid = new int[0][];
    int[][] newPriority = new int[0][];
    long[][] newWaitTicks = new long[0][];
    /** A CSwitch's bytes 0x0A, 0x0B and 0x0F ({@link #packDetail}); {@link #NO_DETAIL} for a compact packet. */
    int[][] detail = new int[0][];
    int[][] remainingQuantum = new int[0][];
    long[][][] pmc = new long[0][][];
    LabelEvent[][] label = new LabelEvent[0][];
    /** Each source's head item's time and sequence, so that comparing sources reads no ring. */
    private long[] headTs = new long[0];
    private long[] headSeq = new long[0];
    /** The non-empty sources, a binary heap by their heads. */
    private int[] heap = new int[0];
    private int heapSize;
    private int size;

    /** A processor's queue of thread, process and ReadyThread events. */
    static int events(int cpu) { return cpu * 3; }
    /** A processor's queue of CSwitch events. */
    static int cswitches(int cpu) { return cpu * 3 + 1; }
    /** A processor's queue of compact packets. */
    static int packets(int cpu) { return cpu * 3 + 2; }

    static int source(int cpu, boolean event, int switchSource) {
        return event ? events(cpu) : switchSource == SwitchBatch.SOURCE_CSWITCH ? cswitches(cpu) : packets(cpu);
    }

    static int cpu(int source) { return source / 3; }
    static boolean isEvent(int source) { return source % 3 == 0; }
    static int switchSource(int source) { return source % 3 == 1 ? SwitchBatch.SOURCE_CSWITCH : SwitchBatch.SOURCE_COMPACT; }

    int size() { return size; }

    /** No CSwitch detail: a compact packet carries none. */
    static final int NO_DETAIL = -1;

    /** PreviousCState or OldThreadRank, NewThreadPriorityDecrement and OldThreadIdealProcessor in one int (bit 31 clear). */
    static int packDetail(int cStateOrRank, int decrement, int idealProcessor) {
        return (cStateOrRank & 0xFF) | (decrement & 0xFF) << 8 | (idealProcessor & 0xFF) << 16;
    }

    static int cStateOrRank(int detail) { return detail & 0xFF; }
    static int decrement(int detail) { return (byte) (detail >> 8); }
    static int idealProcessor(int detail) { return (detail >> 16) & 0xFF; }

    /** Bytes its rings take, reserved room included (the items' label events and counters aside). */
    long bytesHeld() {
        long slots = 0;
        for (long[] ring : ts) slots += ring.length;
        // per slot: ts, seq, new wait ticks (8 each), flags (1), nine int columns, two references
        return slots * (3 * 8 + 1 + 9 * 4 + 2 * 8);
    }

    /** Sources that have had a queue (empty or not). */
    int sources() { return ts.length; }

    int count(int s) { return s < count.length ? count[s] : 0; }

    int kind(int s, int p) { return flags[s][p] >> 2; }
    boolean complete(int s, int p) { return (flags[s][p] & FLAG_COMPLETE) != 0; }
    /** The switch leaves (or left) before its new thread was known. */
    boolean unnamed(int s, int p) { return (flags[s][p] & FLAG_UNNAMED) != 0; }
    void markComplete(int s, int p) { flags[s][p] |= FLAG_COMPLETE; }
    void markUnnamed(int s, int p) { flags[s][p] |= FLAG_COMPLETE | FLAG_UNNAMED; }

    /** A ReadyThread item's awakened thread. */
    int awakened(int s, int p) { return oldTid[s][p]; }
    /** A ReadyThread item's flags (1: readied from a DPC). */
    int readyFlags(int s, int p) { return oldState[s][p]; }

    private int mask(int s) { return ts[s].length - 1; }

    /** Appends an item to source {@code s}; returns its position, whose other columns the caller fills. */
    int push(int s, long t, long sq, int kind, boolean complete) {
        if (s >= ts.length) grow(s + 1);
        int c = count[s];
        if (c == ts[s].length) expand(s);
        int p = (head[s] + c) & mask(s);
        ts[s][p] = t;
        seq[s][p] = sq;
        flags[s][p] = (byte) ((complete ? FLAG_COMPLETE : 0) | kind << 2);
        pmc[s][p] = null;
        label[s][p] = null;
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

    /** Appends a ReadyThread item. */
    void pushReady(int s, long t, long sq, int awakenedTid, int readyFlags) {
        int p = push(s, t, sq, KIND_READY, true);
        oldTid[s][p] = awakenedTid;
        oldState[s][p] = readyFlags;
    }

    /** Appends a thread or process event. */
    void pushLabel(int s, long sq, LabelEvent e) {
        int p = push(s, e.timestamp(), sq, KIND_LABEL, true);
        label[s][p] = e; // after push, which may grow the columns
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
        label[s][h] = null;
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
            Arrays.fill(label[s], null);
            Arrays.fill(pmc[s], null);
            head[s] = 0;
            count[s] = 0;
        }
        heapSize = 0;
        size = 0;
    }

    /** Visits an item. */
    interface Visitor {
        void visit(int source, int position);
    }

    /** Every item, each source in its order. */
    void forEach(Visitor v) {
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
        detail = Arrays.copyOf(detail, n);
        remainingQuantum = Arrays.copyOf(remainingQuantum, n);
        pmc = Arrays.copyOf(pmc, n);
        label = Arrays.copyOf(label, n);
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
        detail[s] = new int[n];
        remainingQuantum[s] = new int[n];
        pmc[s] = new long[n][];
        label[s] = new LabelEvent[n];
    }

    /** Doubles ring {@code s}, its items moved to the front in order. */
    private void expand(int s) {
        int n = ts[s].length;
        int h = head[s];
        int c = count[s];
        long[] t = ts[s], q = seq[s], w = newWaitTicks[s];
        byte[] f = flags[s];
        int[] a = oldTid[s], b = oldPriority[s], st = oldState[s], r = oldWaitReason[s], m = oldWaitMode[s], nt = newTid[s],
                np = newPriority[s], dt = detail[s], rq = remainingQuantum[s];
        long[][] pm = pmc[s];
        LabelEvent[] ev = label[s];
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
            detail[s][k] = dt[from];
            remainingQuantum[s][k] = rq[from];
            pmc[s][k] = pm[from];
            label[s][k] = ev[from];
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
