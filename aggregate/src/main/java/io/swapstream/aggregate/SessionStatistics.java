package io.swapstream.aggregate;

import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.KernelEnums;
import io.swapstream.decode.ThreadInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Routes one session's switches into per-thread accumulators: whole-session and, when a window is
 * set, tumbling event-time windows aligned to the epoch. A wait counts in the window of its
 * switch-in, a run slice in the window of its switch-out (DESIGN.md "Windows"). TID 0 is excluded.
 */
public final class SessionStatistics {
    /** Where a thread's accumulators live: in memory offline, in a state store in the aggregate stage. */
    public interface Accumulators {
        /** The accumulator of {@code tid} for the window starting at {@code windowStart}, or the whole session when it is {@link #WHOLE}. */
        ThreadStatsAccumulator of(int tid, long windowStart);
    }

    public static final long WHOLE = Long.MIN_VALUE;

    private final long windowNanos;
    private final Accumulators accumulators;
    private String session;
    private String host;
    private final Map<Integer, ThreadStatsAccumulator> whole = new HashMap<>();
    private final Map<Long, Map<Integer, ThreadStatsAccumulator>> windows = new HashMap<>();
    private final Map<Integer, long[]> lastPmcByCpu = new HashMap<>();

    /** @param windowNanos tumbling window size, 0 for whole-session statistics only */
    public SessionStatistics(long windowNanos) {
        this(windowNanos, null);
    }

    /** Statistics whose accumulators {@code accumulators} keeps (null: in memory here). */
    public SessionStatistics(long windowNanos, Accumulators accumulators) {
        if (windowNanos < 0) throw new IllegalArgumentException("window must be positive");
        this.windowNanos = windowNanos;
        this.accumulators = accumulators != null ? accumulators : (tid, start) -> start == WHOLE
                ? whole.computeIfAbsent(tid, k -> new ThreadStatsAccumulator())
                : windows.computeIfAbsent(start, k -> new HashMap<>()).computeIfAbsent(tid, k -> new ThreadStatsAccumulator());
    }

    public long windowNanos() { return windowNanos; }

    public void accept(ContextSwitch s) {
        session = s.session();
        host = s.host();
        long t = s.timeNanos();
        long window = windowNanos > 0 ? Math.floorDiv(t, windowNanos) * windowNanos : WHOLE;
        Integer nw = s.newThreadId();
        if (nw != null && nw != 0) {
            accumulators.of(nw, WHOLE).switchIn(t, s.newThreadTimeSinceLastNanos(), s.newThreadWaitTicks());
            if (window != WHOLE) accumulators.of(nw, window).switchIn(t, s.newThreadTimeSinceLastNanos(), s.newThreadWaitTicks());
        }
        long[] deltas = pmcDeltas(s);
        int old = s.oldThreadId();
        if (old != 0) {
            int state = KernelEnums.threadStateValue(s.oldThreadState());
            int reason = KernelEnums.waitReasonValue(s.oldThreadWaitReason());
            ThreadStatsAccumulator a = accumulators.of(old, WHOLE);
            a.switchOut(t, state, reason, s.oldThreadPriority(), s.oldThreadRunNanos());
            if (deltas != null) a.pmc(deltas);
            if (window != WHOLE) {
                ThreadStatsAccumulator w = accumulators.of(old, window);
                w.switchOut(t, state, reason, s.oldThreadPriority(), s.oldThreadRunNanos());
                if (deltas != null) w.pmc(deltas);
            }
        }
    }

    /** Counter deltas over the slice that ends here: this switch's values minus the previous switch's on this cpu. */
    private long[] pmcDeltas(ContextSwitch s) {
        List<Long> pmc = s.pmcCounters();
        if (pmc == null) return null;
        long[] now = new long[pmc.size()];
        for (int i = 0; i < now.length; i++) now[i] = pmc.get(i);
        long[] prev = lastPmcByCpu.put(s.cpu(), now);
        if (prev == null || prev.length != now.length || s.oldThreadRunNanos() == null) return null;
        long[] d = new long[now.length];
        for (int i = 0; i < d.length; i++) d[i] = now[i] - prev[i];
        return d;
    }

    /** Whole-session statistics, by TID (from the in-memory accumulators: not with external ones). */
    public List<ThreadStats> wholeSession(IntFunction<ThreadInfo> labels) {
        List<ThreadStats> out = new ArrayList<>();
        whole.forEach((tid, a) -> out.add(label(a, tid, labels, a.firstNanos(), a.lastNanos())));
        out.sort(Comparator.comparingInt(ThreadStats::threadId));
        return out;
    }

    /** Windowed statistics, by window start then TID (in-memory accumulators only). */
    public List<ThreadStats> windowed(IntFunction<ThreadInfo> labels) {
        List<ThreadStats> out = new ArrayList<>();
        windows.forEach((start, m) -> m.forEach((tid, a) -> out.add(label(a, tid, labels, start, start + windowNanos))));
        out.sort(Comparator.comparingLong(ThreadStats::windowStartNanos).thenComparingInt(ThreadStats::threadId));
        return out;
    }

    private ThreadStats label(ThreadStatsAccumulator a, int tid, IntFunction<ThreadInfo> labels, long start, long end) {
        ThreadInfo info = labels == null ? null : labels.apply(tid);
        return a.toStats(session, host, tid, info == null ? null : info.processId(),
                info == null ? null : info.processName(), info == null ? null : info.threadName(), start, end);
    }
}
