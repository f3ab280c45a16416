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
    public static final long WHOLE = Long.MIN_VALUE;
    private static final long NONE = ThreadStatsAccumulator.NONE;
    private static final int NO_INT = SwitchBatch.NONE;
    private static final long NO_TIME = SwitchBatch.NO_TIME;

    private final long windowNanos;
    private final AccumulatorStore accumulators;
    private final ThreadLabels labels;
    private final StatisticsOutput output;
    /** Offline: the accumulators, rows and edges in memory; null in the aggregate stage. */
    private final InMemory memory;
    private String session;
    private String host;
    /** Who woke whom in the open window (the whole session without windows). */
    private WakeEdges edges = new WakeEdges();
    /** The window the latest switches fall in; earlier ones are closed. */
    private long openWindow = WHOLE;
    /** Per processor, the PMC counters of its previous switch: the baseline of the next slice's deltas. */
    private long[][] lastPmcByCpu = new long[0][];
    private long[] deltas = new long[0];

    /**
     * Statistics in memory, for a file.
     *
     * @param windowNanos tumbling window size, 0 for whole-session statistics only
     */
    public SessionStatistics(long windowNanos) {
        checkWindow(windowNanos);
        this.windowNanos = windowNanos;
        this.memory = new InMemory();
        this.accumulators = memory;
        this.output = memory;
        this.labels = new ThreadLabels(LabelStore.NONE);
    }

    /** Statistics whose accumulators, labels and output the host keeps (the aggregate stage). */
    public SessionStatistics(long windowNanos, AccumulatorStore accumulators, LabelStore labels, StatisticsOutput output) {
        checkWindow(windowNanos);
        this.windowNanos = windowNanos;
        this.memory = null;
        this.accumulators = accumulators;
        this.output = output;
        this.labels = new ThreadLabels(labels);
    }

    private static void checkWindow(long windowNanos) {
        if (windowNanos < 0) throw new IllegalArgumentException("window must be 0 (the whole session) or positive");
    }

    /** Offline: accumulators in maps; a closed window becomes rows, labelled as its threads were then. */
    private final class InMemory implements AccumulatorStore, StatisticsOutput {
        private final Int2ObjectOpenHashMap<ThreadStatsAccumulator> whole = new Int2ObjectOpenHashMap<>();
        private final Map<Long, Int2ObjectOpenHashMap<ThreadStatsAccumulator>> windows = new HashMap<>();
        private final List<ThreadStats> closedWindows = new ArrayList<>();
        private final List<WakeEdge> closedEdges = new ArrayList<>();
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
        public void closeWindow(long start, Each each) {
            if (start == openStart) open = null;
            Int2ObjectOpenHashMap<ThreadStatsAccumulator> m = windows.remove(start);
            if (m == null) return;
            m.forEach((tid, a) -> {
                each.accept(tid, a);
                of(tid, WHOLE).merge(a);
            });
        }

        @Override
        public void windowRow(int tid, ThreadStatsAccumulator a, long start) {
            closedWindows.add(label(a, tid, start, start + windowNanos));
        }

        @Override
        public void edgesClosed(List<WakeEdge> e) {
            closedEdges.addAll(e);
        }
    }

    private InMemory memory() {
        if (memory == null) throw new IllegalStateException("the host keeps these statistics' rows");
        return memory;
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
        labels.take(b.threads(), b.count() > 0 ? b.timeNanos(0) : Long.MAX_VALUE);
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
            labels.advanceTo(b.timeNanos(i));
            wake(b, i, readyBin);
        }
        labels.endOfBatch();
    }

    /** The session's thread records: the labels of its rows. */
    public ThreadLabels labels() {
        return labels;
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
            edges.add(t, readier == NO_INT ? WakeEdges.INTERRUPT : pid == NO_INT ? WakeEdges.UNKNOWN : pid, labels.processOf(nw), waits, ready, readyBin);
        } else if (ready == NO_TIME && b.newThreadTimeSinceLastNanos(i) != NO_TIME) {
            // it waited (a runnable switch-out would have given a ready time) and no ReadyThread event says who ended it
            edges.add(t, WakeEdges.UNKNOWN, labels.processOf(nw), b.newThreadTimeSinceLastNanos(i), NONE);
        }
    }

    /** The window from {@code start} is final: its rows, then its wake edges, go out. */
    private void closeWindow(long start) {
        accumulators.closeWindow(start, (tid, a) -> output.windowRow(tid, a, start));
        output.windowClosed(start);
        closeEdges(start);
    }

    /** The open window's wake edges go out named, and a new window's begin. */
    private void closeEdges(long start) {
        if (!edges.isEmpty()) output.edgesClosed(edges.toRecords(session, host, start, start + windowNanos, labels::processName));
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
                    closeWindow(openWindow);
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
            closeWindow(openWindow);
        } else if (windowNanos == 0 && !edges.isEmpty()) {
            // without windows, the whole session's edges, first to last wake-up
            output.edgesClosed(edges.toRecords(session, host, null, 0, labels::processName));
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
        return wholeSessionSoFar();
    }

    /**
     * The whole-session statistics a running session's rows give (in memory only; not final): with windows, its closed
     * windows' and the switches that came after their window had closed; the open window's are in them once it closes.
     */
    public List<ThreadStats> wholeSessionSoFar() {
        List<ThreadStats> out = new ArrayList<>();
        memory().whole.forEach((tid, a) -> out.add(label(a, tid, a.firstNanos(), a.lastNanos())));
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
        List<ThreadStats> out = new ArrayList<>(memory().closedWindows);
        out.sort(Comparator.comparingLong(ThreadStats::getWindowStartNanos).thenComparingInt(ThreadStats::getThreadId));
        return out;
    }

    /**
     * Who woke whom in a finished trace (in memory only): each window's edges, by window start then most
     * wake-ups first; without windows, the whole session's.
     */
    public List<WakeEdge> wakeEdges() {
        closeAll();
        List<WakeEdge> out = new ArrayList<>(memory().closedEdges);
        out.sort(Comparator.comparingLong(WakeEdge::getWindowStartNanos).thenComparing(Comparator.comparingLong(WakeEdge::getWakeCount).reversed())
                .thenComparing(e -> e.getWakerProcess().toString()).thenComparing(e -> e.getWokenProcess().toString()));
        return out;
    }

    private ThreadStats label(ThreadStatsAccumulator a, int tid, long start, long end) {
        ThreadLabel info = labels.label(tid);
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
