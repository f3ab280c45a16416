package io.swapstream.aggregate;

import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
        void label(ThreadInfo t);
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
    private final Map<Integer, ThreadInfo> labels = new HashMap<>();
    private final List<ThreadStats> closedWindows = new ArrayList<>();
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
        public void label(ThreadInfo t) {
            labels.put(t.threadId(), t);
        }
    }

    public long windowNanos() { return windowNanos; }

    /** Takes every row of {@code b}, columns straight into the accumulators. */
    public void accept(SwitchBatch b) {
        session = b.session();
        host = b.host();
        for (ThreadInfo t : b.threads()) accumulators.label(t);
        for (int i = 0; i < b.count(); i++) {
            int pmc = b.pmcCount(i);
            if (pmc > 0) {
                if (deltas.length < pmc) deltas = new long[pmc];
                for (int k = 0; k < pmc; k++) deltas[k] = b.pmc(i, k);
            }
            accept(b.cpu(i), b.timeNanos(i), b.oldThreadId(i), b.oldThreadPriority(i), b.oldThreadState(i),
                    b.oldThreadWaitReason(i), b.newThreadId(i), b.newThreadWaitTicks(i), b.newThreadTimeSinceLastNanos(i),
                    b.oldThreadRunNanos(i), b.newThreadReadyNanos(i), b.readyingThreadId(i), b.previousCState(i), pmc);
        }
    }

    private SwitchBatch oneRow;

    /** Takes one switch given as a record (tests and the row-based commands). */
    public void accept(ContextSwitch s) {
        if (oneRow == null) oneRow = new SwitchBatch(16);
        oneRow.reset(s.session(), s.host()).add(s);
        accept(oneRow);
    }

    /** One switch; the PMC counters, {@code pmc} of them, are in {@link #deltas}. */
    private void accept(int cpu, long t, int old, int oldPriority, int oldState, int oldReason, int nw, long waitTicks,
                        long sinceLast, long run, long ready, int readier, int cState, int pmc) {
        long window = WHOLE;
        if (windowNanos > 0) {
            window = Math.floorDiv(t, windowNanos) * windowNanos;
            if (openWindow == WHOLE || window > openWindow) {
                if (openWindow != WHOLE) accumulators.windowClosed(openWindow);
                openWindow = window;
            } else if (window < openWindow) {
                window = WHOLE; // its window went out final: the switch counts in the whole session only
            }
        }
        if (nw != NO_INT && nw != 0) {
            ThreadStatsAccumulator a = accumulators.of(nw, window);
            a.switchIn(t, sinceLast, waitTicks);
            if (ready != NO_TIME) a.ready(ready, readier, old == 0, cState == NO_INT ? -1 : cState);
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

    /** The session has ended: the open window is final too. */
    public void closeAll() {
        if (openWindow != WHOLE) accumulators.windowClosed(openWindow);
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

    private ThreadStats label(ThreadStatsAccumulator a, int tid, long start, long end) {
        ThreadInfo info = labels.get(tid);
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
