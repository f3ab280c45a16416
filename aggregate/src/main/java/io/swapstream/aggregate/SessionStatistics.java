package io.swapstream.aggregate;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;

/**
 * Routes one session's switches, in time order, into per-thread accumulators: whole-session and,
 * when a window is set, tumbling event-time windows aligned to the epoch. A wait counts in the
 * window of its switch-in, a run slice in the window of its switch-out (docs/architecture.md "Statistics"), so a
 * switch touches only the window of its own time and a window is final once the switches pass its
 * end. With windows, a switch goes into its window's accumulator only, and a closed window is
 * merged into the whole-session one (every statistic merges exactly, the sketches bin by bin):
 * one accumulator update per switch, not two. TID 0 is excluded.
 */
public final class SessionStatistics {
    /** Where a thread's accumulators live: in memory offline, in a state store in the aggregate stage. */
    public interface Accumulators {
        /** The accumulator of {@code tid} for the window starting at {@code windowStart}, or the whole session when it is {@link #WHOLE}. */
        ThreadStatsAccumulator of(int tid, long windowStart);

        /**
         * The switches have passed the end of the window starting at {@code windowStart}: its
         * accumulators are final, and each is merged into its thread's whole-session accumulator.
         */
        void windowClosed(long windowStart);

        /** A thread record carried by a batch: the label its rows get from now on. */
        void label(ThreadLabel t);

        /** The wake edges of a window that just closed ({@link #windowClosed}), named. */
        default void edgesClosed(List<WakeEdge> edges) { }

        /** The process of thread {@code tid} by its label, {@link WakeEdges#UNKNOWN} when it has none (a label not in memory). */
        default int processOf(int tid) { return WakeEdges.UNKNOWN; }

        /** The image name of process {@code pid} by the labels, null when none says (a label not in memory). */
        default String processName(int pid) { return null; }
    }

    public static final long WHOLE = Long.MIN_VALUE;
    private static final long NONE = ThreadStatsAccumulator.NONE;
    private static final int NO_INT = SwitchBatch.NONE;
    private static final long NO_TIME = SwitchBatch.NO_TIME;

    private final long windowNanos;
    private final Accumulators accumulators;
    private String session;
    private String host;
    private final Int2ObjectOpenHashMap<ThreadStatsAccumulator> whole = new Int2ObjectOpenHashMap<>();
    private final Map<Long, Int2ObjectOpenHashMap<ThreadStatsAccumulator>> windows = new HashMap<>();
    /** In memory: each TID's latest thread record, and the rows of the windows closed so far. */
    private final Map<Integer, ThreadLabel> labels = new HashMap<>();
    private final List<ThreadStats> closedWindows = new ArrayList<>();
    private final List<WakeEdge> closedEdges = new ArrayList<>();
    /** Who woke whom in the open window (the whole session without windows). */
    private WakeEdges edges = new WakeEdges();
    /** Each thread's process and each process's image name, from the labels seen: the wake edges' keys and names. */
    private final Int2IntOpenHashMap pidOfTid = new Int2IntOpenHashMap();
    /**
     * The batch's thread records of threads that start after its first row, by start: a batch carries
     * them before its rows, and a TID reused within the batch (even twice) takes its new process only
     * from its new thread's start on.
     */
    private final List<ThreadLabel> laterStarts = new ArrayList<>();
    private final Int2ObjectOpenHashMap<String> processNames = new Int2ObjectOpenHashMap<>();
    /** The window the latest switches fall in; earlier ones are closed. */
    private long openWindow = WHOLE;
    /** Switches that came after their window had closed (out of time order): counted whole-session only. */
    /** Per processor, the PMC counters of its previous switch: the baseline of the next slice's deltas. */
    private long[][] lastPmcByCpu = new long[0][];
    private long[] deltas = new long[0];

    /** @param windowNanos tumbling window size, 0 for whole-session statistics only */
    public SessionStatistics(long windowNanos) {
        this(windowNanos, null);
    }

    /** Statistics whose accumulators {@code accumulators} keeps (null: in memory here). */
    public SessionStatistics(long windowNanos, Accumulators accumulators) {
        if (windowNanos < 0) throw new IllegalArgumentException("window must be positive");
        this.windowNanos = windowNanos;
        this.accumulators = accumulators != null ? accumulators : new InMemory();
    }

    /** Offline: accumulators in maps; a closed window becomes rows, labelled as its threads were then. */
    private final class InMemory implements Accumulators {
        /** The open window's accumulators: the window of almost every switch, found without a boxed key. */
        private long openStart = Long.MIN_VALUE;
        private Int2ObjectOpenHashMap<ThreadStatsAccumulator> open;

        @Override
        public ThreadStatsAccumulator of(int tid, long start) {
            Int2ObjectOpenHashMap<ThreadStatsAccumulator> m;
            if (start == WHOLE) {
                m = whole;
            } else {
                if (open == null || start != openStart) {
                    open = windows.computeIfAbsent(start, k -> new Int2ObjectOpenHashMap<>());
                    openStart = start;
                }
                m = open;
            }
            ThreadStatsAccumulator a = m.get(tid);
            if (a == null) m.put(tid, a = new ThreadStatsAccumulator());
            return a;
        }

        @Override
        public void windowClosed(long start) {
            if (start == openStart) open = null;
            Int2ObjectOpenHashMap<ThreadStatsAccumulator> m = windows.remove(start);
            if (m == null) return;
            m.forEach((tid, a) -> {
                closedWindows.add(SessionStatistics.this.label(a, tid, start, start + windowNanos));
                of(tid, WHOLE).merge(a);
            });
        }

        @Override
        public void edgesClosed(List<WakeEdge> e) {
            closedEdges.addAll(e);
        }

        @Override
        public void label(ThreadLabel t) {
            labels.put(t.threadId(), t);
        }
    }

    public long windowNanos() { return windowNanos; }

    /**
     * The session and host its rows and edges name: a stage that opens a session from its stores sets them,
     * as a restored session's next record may end it before any batch says them.
     */
    public void identify(String session, String host) {
        this.session = session;
        this.host = host;
    }

    /** Takes every row of {@code b}, columns straight into the accumulators. */
    public void accept(SwitchBatch b) {
        session = b.session();
        host = b.host();
        laterStarts.clear();
        long first = b.count() > 0 ? b.timeNanos(0) : Long.MAX_VALUE;
        for (ThreadLabel t : b.threads()) {
            accumulators.label(t);
            // a thread's end and rundown records repeat its start: they wait with it
            if (t.startNanos() != null && t.startNanos() > first) laterStarts.add(t);
            else pidOfTid.put(t.threadId(), pidOf(t));
            if (t.processId() != null && t.processName() != null) processNames.put((int) t.processId(), t.processName());
        }
        laterStarts.sort(Comparator.comparingLong(ThreadLabel::startNanos));
        int started = 0;
        for (int i = 0; i < b.count(); i++) {
            int pmc = b.pmcCount(i);
            if (pmc > 0) {
                if (deltas.length < pmc) deltas = new long[pmc];
                for (int k = 0; k < pmc; k++) deltas[k] = b.pmc(i, k);
            }
            long ready = b.newThreadReadyNanos(i);
            // its sketch bin once, for the thread's ready sketches and its wake edge's
            int readyBin = ready == NO_TIME ? ThreadStatsAccumulator.NO_BIN : ThreadStatsAccumulator.bin(ready);
            accept(b.cpu(i), b.timeNanos(i), b.oldThreadId(i), b.oldThreadPriority(i), b.oldThreadState(i),
                    b.oldThreadWaitReason(i), b.newThreadId(i), b.newThreadWaitTicks(i), b.newThreadTimeSinceLastNanos(i),
                    b.oldThreadRunNanos(i), ready, readyBin, b.readyingThreadId(i), b.previousCState(i), pmc);
            while (started < laterStarts.size() && laterStarts.get(started).startNanos() <= b.timeNanos(i)) {
                ThreadLabel t = laterStarts.get(started++);
                pidOfTid.put(t.threadId(), pidOf(t));
            }
            wake(b, i, readyBin);
        }
        for (; started < laterStarts.size(); started++) pidOfTid.put(laterStarts.get(started).threadId(), pidOf(laterStarts.get(started)));
    }

    private static int pidOf(ThreadLabel t) {
        return t.processId() == null ? WakeEdges.UNKNOWN : t.processId();
    }

    private SwitchBatch oneRow;

    /** Takes one switch given as a record (tests and the row-based commands). */
    public void accept(SwitchRow s) {
        if (oneRow == null) oneRow = new SwitchBatch(16);
        oneRow.reset(s.session(), s.host()).add(s);
        accept(oneRow);
    }

    /**
     * Row {@code i}'s switch-in, if it ended a wait, as a wake edge (docs/architecture.md "Wake edges"),
     * in the window {@link #accept} just routed it to: none when that window had closed.
     */
    private void wake(SwitchBatch b, int i, int readyBin) {
        int nw = b.newThreadId(i);
        if (nw == NO_INT || nw == 0) return;
        long t = b.timeNanos(i);
        if (windowNanos > 0 && Math.floorDiv(t, windowNanos) * windowNanos != openWindow) return;
        long ready = b.newThreadReadyNanos(i);
        long waits = b.newThreadWaitsNanos(i);
        int readier = b.readyingThreadId(i);
        if (ready != NO_TIME && waits != NO_TIME && (waits > 0 || readier != NO_INT)) {
            // readied by a thread, or from a DPC, an interrupt or the idle thread; a runnable switch-out readies itself (0, no one)
            int pid = b.readyingProcessId(i);
            edges.add(t, readier == NO_INT ? WakeEdges.INTERRUPT : pid == NO_INT ? WakeEdges.UNKNOWN : pid, processOf(nw), waits, ready, readyBin);
        } else if (ready == NO_TIME && b.newThreadTimeSinceLastNanos(i) != NO_TIME) {
            // it waited (a runnable switch-out would have given a ready time) and no ReadyThread event says who ended it
            edges.add(t, WakeEdges.UNKNOWN, processOf(nw), b.newThreadTimeSinceLastNanos(i), NONE);
        }
    }

    private int processOf(int tid) {
        int pid = pidOfTid.getOrDefault(tid, Integer.MIN_VALUE);
        if (pid == Integer.MIN_VALUE) pidOfTid.put(tid, pid = accumulators.processOf(tid));
        return pid;
    }

    private String processName(int pid) {
        String n = processNames.get(pid);
        if (n == null && (n = accumulators.processName(pid)) != null) processNames.put(pid, n);
        return n;
    }

    /** The open window's wake edges go out named, and a new window's begin. */
    private void closeEdges(long start) {
        if (!edges.isEmpty()) accumulators.edgesClosed(edges.toRecords(session, host, start, start + windowNanos, this::processName));
        edges = new WakeEdges();
    }

    /** The open window's wake edges: a stage writes them with its accumulators. */
    public WakeEdges openEdges() {
        return edges;
    }

    /** The open window's wake edges as last written (a restore). */
    public void restoreEdges(WakeEdges e) {
        edges = e;
    }

    /** One switch; the PMC counters, {@code pmc} of them, are in {@link #deltas}. */
    private void accept(int cpu, long t, int old, int oldPriority, int oldState, int oldReason, int nw, long waitTicks,
                        long sinceLast, long run, long ready, int readyBin, int readier, int cState, int pmc) {
        long window = WHOLE;
        if (windowNanos > 0) {
            window = Math.floorDiv(t, windowNanos) * windowNanos;
            if (openWindow == WHOLE || window > openWindow) {
                if (openWindow != WHOLE) {
                    accumulators.windowClosed(openWindow);
                    closeEdges(openWindow);
                }
                openWindow = window;
            } else if (window < openWindow) {
                window = WHOLE; // its window went out final: the switch counts in the whole session only
            }
        }
        if (nw != NO_INT && nw != 0) {
            ThreadStatsAccumulator a = accumulators.of(nw, window);
            a.switchIn(t, sinceLast, waitTicks);
            if (ready != NO_TIME) a.ready(ready, readyBin, readier, old == 0, cState == NO_INT ? -1 : cState);
        }
        boolean sliceDeltas = pmcDeltas(cpu, pmc, run);
        if (old != 0) {
            ThreadStatsAccumulator a = accumulators.of(old, window);
            a.switchOut(t, oldState, oldReason == NO_INT ? -1 : oldReason, oldPriority, run);
            if (sliceDeltas) a.pmc(deltas, pmc);
        }
    }

    /**
     * Turns this switch's counters (in {@link #deltas}) into the deltas over the slice that ends
     * here: minus the previous switch's on this cpu. False when there is no slice to charge.
     */
    private boolean pmcDeltas(int cpu, int pmc, long run) {
        if (pmc == 0) return false;
        if (cpu >= lastPmcByCpu.length) lastPmcByCpu = Arrays.copyOf(lastPmcByCpu, cpu + 1);
        long[] prev = lastPmcByCpu[cpu];
        long[] now = prev != null && prev.length == pmc ? prev : new long[pmc];
        boolean usable = prev != null && prev.length == pmc && run != NONE;
        for (int k = 0; k < pmc; k++) {
            long v = deltas[k];
            if (usable) deltas[k] = v - now[k];
            now[k] = v;
        }
        lastPmcByCpu[cpu] = now;
        return usable;
    }

    /** The session has ended: the open window is final too (without windows, the whole session's wake edges). */
    public void closeAll() {
        if (openWindow != WHOLE) {
            accumulators.windowClosed(openWindow);
            closeEdges(openWindow);
        } else if (windowNanos == 0 && !edges.isEmpty()) {
            // without windows, the whole session's edges, first to last wake-up
            accumulators.edgesClosed(edges.toRecords(session, host, null, 0, this::processName));
            edges = new WakeEdges();
        }
        openWindow = WHOLE;
    }

    /**
     * Whole-session statistics of a finished trace, by TID, labelled as the threads were last (in
     * memory only; final): the open window closes now, and merges in.
     */
    public List<ThreadStats> wholeSession() {
        closeAll();
        List<ThreadStats> out = new ArrayList<>();
        whole.forEach((tid, a) -> out.add(label(a, tid, a.firstNanos(), a.lastNanos())));
        out.sort(Comparator.comparingInt(ThreadStats::getThreadId));
        return out;
    }

    /**
     * Windowed statistics of a finished trace, by window start then TID (in memory only; final): the
     * open window closes now. Each window is labelled as its threads were when it closed, as in the
     * aggregate stage.
     */
    public List<ThreadStats> windowed() {
        closeAll();
        List<ThreadStats> out = new ArrayList<>(closedWindows);
        out.sort(Comparator.comparingLong(ThreadStats::getWindowStartNanos).thenComparingInt(ThreadStats::getThreadId));
        return out;
    }

    /**
     * Who woke whom in a finished trace (in memory only): each window's edges, by window start then most
     * wake-ups first; without windows, the whole session's.
     */
    public List<WakeEdge> wakeEdges() {
        closeAll();
        List<WakeEdge> out = new ArrayList<>(closedEdges);
        out.sort(Comparator.comparingLong(WakeEdge::getWindowStartNanos).thenComparing(Comparator.comparingLong(WakeEdge::getWakeCount).reversed())
                .thenComparing(e -> e.getWakerProcess().toString()).thenComparing(e -> e.getWokenProcess().toString()));
        return out;
    }

    private ThreadStats label(ThreadStatsAccumulator a, int tid, long start, long end) {
        ThreadLabel info = labels.get(tid);
        return a.toStats(session, host, tid, info == null ? null : info.processId(),
                info == null ? null : info.processName(), info == null ? null : info.threadName(), start, end, true);
    }

    /** What carries over between batches besides the accumulators: the open window, PMC baselines. */
    public void writeState(StateWriter o) {
        o.writeLong(openWindow);
        o.writeInt(lastPmcByCpu.length);
        for (long[] p : lastPmcByCpu) {
            o.writeInt(p == null ? -1 : p.length);
            if (p != null) for (long v : p) o.writeLong(v);
        }
    }

    public void readState(StateReader in) {
        openWindow = in.readLong();
        lastPmcByCpu = new long[in.readInt()][];
        for (int c = 0; c < lastPmcByCpu.length; c++) {
            int n = in.readInt();
            if (n < 0) continue;
            lastPmcByCpu[c] = new long[n];
            for (int k = 0; k < n; k++) lastPmcByCpu[c][k] = in.readLong();
        }
    }
}
