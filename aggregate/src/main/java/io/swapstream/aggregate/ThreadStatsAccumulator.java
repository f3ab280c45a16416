package io.swapstream.aggregate;

import io.swapstream.etw.KernelEnums;
import io.swapstream.schemas.avro.ThreadStats;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.mapping.LogarithmicMapping;
import com.datadoghq.sketch.ddsketch.store.UnboundedSizeDenseStore;
import it.unimi.dsi.fastutil.ints.Int2LongMap;
import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;

/**
 * Running statistics of one thread in one window. Mergeable, so partial results (per partition,
 * per restart) combine exactly; percentiles come from a DDSketch with 1% relative accuracy.
 */
public final class ThreadStatsAccumulator {
    public static final double RELATIVE_ACCURACY = 0.01;

    long firstNanos = Long.MAX_VALUE;
    long lastNanos = Long.MIN_VALUE;
    long switchIn;
    long switchOut;
    long voluntary;
    long involuntary;
    final long[] waitReasons = new long[64];
    long waitReasonBitMap;
    long waitCount;
    long waitSum;
    long waitMin = Long.MAX_VALUE;
    long waitMax = Long.MIN_VALUE;
    DDSketch waits = newSketch();
    long ticksCount;
    long ticksSum;
    long ticksMax = Long.MIN_VALUE;
    long runCount;
    long runSum;
    long runMax = Long.MIN_VALUE;
    /** Made at the first run slice: the rows carry it for the fleet's roll-ups. */
    DDSketch runs;
    long priorityCount;
    long prioritySum;
    int priorityMin = Integer.MAX_VALUE;
    int priorityMax = Integer.MIN_VALUE;
    final long[] priorityHistogram = new long[32];
    long[] pmcDeltas;
    long readyCount;
    long readySum;
    long readyMax = Long.MIN_VALUE;
    /**
     * Ready time split into idle wake-ups and contention; null until the first ready time (many threads of a
     * trace without ReadyThread events and runnable switch-outs have none). The two halves' sketches are the
     * ready times' sketch, merged when a row is made: a value goes to one sketch, not two.
     */
    ReadySplit split;
    /** What a row without ready times carries: zeros and empty maps. */
    private static final ReadySplit NO_READY = new ReadySplit();
    /** Readying thread id to switch-ins it readied; null until one is known. */
    Int2LongOpenHashMap readiers;
    /** How many of {@link #toStats}'s topReadiers. */
    public static final int TOP_READIERS = 5;

    /** Immutable, so every sketch shares it. */
    private static final LogarithmicMapping MAPPING = new LogarithmicMapping(RELATIVE_ACCURACY);
    private static final double MIN_INDEXED = MAPPING.minIndexableValue();

    static DDSketch newSketch() {
        return new DDSketch(MAPPING, ThreadStatsAccumulator::newStore);
    }

    /** What DDSketch.accept does for a non-negative value, without its checks and boxing of the value. */
    static void add(DDSketch sketch, long nanos) {
        if (nanos > MIN_INDEXED) sketch.getPositiveValueStore().add(MAPPING.index(nanos));
        else sketch.accept(nanos);
    }

    /** A value's bin in every sketch here ({@link #NO_BIN} below the smallest): one logarithm for all the sketches a value goes to. */
    public static int bin(long nanos) {
        return nanos > MIN_INDEXED ? MAPPING.index(nanos) : NO_BIN;
    }

    public static final int NO_BIN = Integer.MIN_VALUE;

    /** {@link #add}, its bin known. */
    static void add(DDSketch sketch, long nanos, int bin) {
        if (bin != NO_BIN) sketch.getPositiveValueStore().add(bin);
        else sketch.accept(nanos);
    }

    /**
     * A dense store that grows by 64 bins and keeps 32 spare: the default (64, 6) re-centres its
     * array for most new extremes of waits that span six orders of magnitude, and larger steps make
     * every one of a busy host's thousands of sketches bigger (docs/performance.md, "Memory").
     */
    static UnboundedSizeDenseStore newStore() {
        return new UnboundedSizeDenseStore(64, 32);
    }

    void seen(long nanos) {
        if (nanos < firstNanos) firstNanos = nanos;
        if (nanos > lastNanos) lastNanos = nanos;
    }

    /** No value (a null cell of a switch batch). */
    public static final long NONE = Long.MIN_VALUE;

    /** The thread came on a processor; {@link #NONE} for an unknown wait or tick count. */
    public void switchIn(long nanos, long waitNanos, long waitTicks) {
        seen(nanos);
        switchIn++;
        if (waitNanos != NONE) {
            long w = waitNanos;
            waitCount++;
            waitSum += w;
            if (w < waitMin) waitMin = w;
            if (w > waitMax) waitMax = w;
            add(waits, w);
        }
        if (waitTicks != NONE) {
            ticksCount++;
            ticksSum += waitTicks;
            if (waitTicks > ticksMax) ticksMax = waitTicks;
        }
    }

    /**
     * The thread left a processor; {@code waitReason} is negative unless the state is Waiting,
     * {@code priority} Integer.MIN_VALUE and {@code runNanos} {@link #NONE} when unknown.
     */
    public void switchOut(long nanos, int state, int waitReason, int priority, long runNanos) {
        seen(nanos);
        switchOut++;
        if (state == KernelEnums.STATE_WAITING) {
            voluntary++;
            if (waitReason >= 0 && waitReason < 64) {
                waitReasons[waitReason]++;
                waitReasonBitMap |= 1L << waitReason;
            }
        } else if (state != KernelEnums.STATE_TERMINATED) {
            involuntary++;
        }
        if (runNanos != NONE) {
            runCount++;
            runSum += runNanos;
            if (runNanos > runMax) runMax = runNanos;
            if (runs == null) runs = newSketch();
            add(runs, runNanos);
        }
        if (priority != Integer.MIN_VALUE) {
            int p = priority;
            priorityCount++;
            prioritySum += p;
            if (p < priorityMin) priorityMin = p;
            if (p > priorityMax) priorityMax = p;
            if (p >= 0 && p < 32) priorityHistogram[p]++;
        }
    }

    /**
     * The switch-in just taken had a ready time (docs/architecture.md "Ready time"); {@code readier} is the
     * readying thread or Integer.MIN_VALUE when none is known; {@code fromIdle} when the processor ran the
     * idle thread, with the C-state it left ({@code cState}, negative when not logged).
     */
    public void ready(long readyNanos, int readier, boolean fromIdle, int cState) {
        ready(readyNanos, bin(readyNanos), readier, fromIdle, cState);
    }

    /** {@link #ready}, the value's {@link #bin} known. */
    public void ready(long readyNanos, int bin, int readier, boolean fromIdle, int cState) {
        if (split == null) split = new ReadySplit();
        split.add(readyNanos, bin, fromIdle, cState);
        readyCount++;
        readySum += readyNanos;
        if (readyNanos > readyMax) readyMax = readyNanos;
        if (readier != Integer.MIN_VALUE) {
            if (readiers == null) readiers = new Int2LongOpenHashMap();
            readiers.addTo(readier, 1);
        }
    }

    /** Adds one run slice's counter deltas, the first {@code n} of {@code deltas}. */
    public void pmc(long[] deltas, int n) {
        if (pmcDeltas == null) pmcDeltas = new long[n];
        else if (pmcDeltas.length < n) pmcDeltas = Arrays.copyOf(pmcDeltas, n);
        for (int i = 0; i < n; i++) pmcDeltas[i] += deltas[i];
    }

    public void merge(ThreadStatsAccumulator o) {
        firstNanos = Math.min(firstNanos, o.firstNanos);
        lastNanos = Math.max(lastNanos, o.lastNanos);
        switchIn += o.switchIn;
        switchOut += o.switchOut;
        voluntary += o.voluntary;
        involuntary += o.involuntary;
        for (int i = 0; i < 64; i++) waitReasons[i] += o.waitReasons[i];
        waitReasonBitMap |= o.waitReasonBitMap;
        waitCount += o.waitCount;
        waitSum += o.waitSum;
        waitMin = Math.min(waitMin, o.waitMin);
        waitMax = Math.max(waitMax, o.waitMax);
        waits.mergeWith(o.waits);
        ticksCount += o.ticksCount;
        ticksSum += o.ticksSum;
        ticksMax = Math.max(ticksMax, o.ticksMax);
        runCount += o.runCount;
        runSum += o.runSum;
        runMax = Math.max(runMax, o.runMax);
        if (o.runs != null) {
            if (runs == null) runs = newSketch();
            runs.mergeWith(o.runs);
        }
        priorityCount += o.priorityCount;
        prioritySum += o.prioritySum;
        priorityMin = Math.min(priorityMin, o.priorityMin);
        priorityMax = Math.max(priorityMax, o.priorityMax);
        for (int i = 0; i < 32; i++) priorityHistogram[i] += o.priorityHistogram[i];
        if (o.pmcDeltas != null) pmc(o.pmcDeltas, o.pmcDeltas.length);
        readyCount += o.readyCount;
        readySum += o.readySum;
        readyMax = Math.max(readyMax, o.readyMax);
        if (o.split != null) {
            if (split == null) split = new ReadySplit();
            split.merge(o.split);
        }
        if (o.readiers != null) {
            if (readiers == null) readiers = new Int2LongOpenHashMap();
            for (Int2LongMap.Entry e : o.readiers.int2LongEntrySet()) readiers.addTo(e.getIntKey(), e.getLongValue());
        }
    }

    public long firstNanos() { return firstNanos; }
    public long lastNanos() { return lastNanos; }

    private static final double[] QUANTILES = {0.50, 0.90, 0.99};

    /**
     * p50, p90 and p99 of {@code sketch}, held within [min, max] (the sketch's bins are 1% wide);
     * nulls when it holds nothing. Together: the sketch counts its bins once, not once per quantile.
     */
    public static Long[] quantiles(DDSketch sketch, long count, long min, long max) {
        Long[] out = new Long[QUANTILES.length];
        if (count == 0 || sketch == null) return out;
        // DDSketch.getValueAtQuantile's rule (the first bin whose count from the bottom passes q (n - 1)), in one
        // pass for the three: the library walks the bins once a quantile
        double positive = sketch.getPositiveValueStore().getTotalCount();
        double total = sketch.getCount();
        if (total == 0) return out;
        double below = total - positive; // the zeros: no negative values here
        int q = 0;
        for (; q < QUANTILES.length && below > QUANTILES[q] * (total - 1); q++) out[q] = Math.max(min, Math.min(max, 0L));
        for (java.util.Iterator<com.datadoghq.sketch.ddsketch.store.Bin> it = sketch.getPositiveValueStore().getAscendingIterator();
                q < QUANTILES.length && it.hasNext(); ) {
            com.datadoghq.sketch.ddsketch.store.Bin bin = it.next();
            below += bin.getCount();
            long value = Math.round(MAPPING.value(bin.getIndex()));
            for (; q < QUANTILES.length && below > QUANTILES[q] * (total - 1); q++) out[q] = Math.max(min, Math.min(max, value));
        }
        return out;
    }

    /**
     * The 99th percentile of {@code sketch} as {@link DDSketch#getValueAtQuantile} gives it (the same bin), held
     * within [0, max]; null when it holds nothing. From the top down: a hundredth of the values is passed, not
     * all but a hundredth (the rows of short windows take several of these each).
     */
    public static Long p99(DDSketch sketch, long count, long max) {
        if (count == 0 || sketch == null) return null;
        double total = sketch.getCount(); // a pass over the bins: once
        if (total == 0) return null;
        double rank = 0.99 * (total - 1);
        double above = 0;
        for (java.util.Iterator<com.datadoghq.sketch.ddsketch.store.Bin> it = sketch.getPositiveValueStore().getDescendingIterator();
                it.hasNext(); ) {
            com.datadoghq.sketch.ddsketch.store.Bin bin = it.next();
            // the bin where the count from the bottom first passes the rank
            if (total - above - bin.getCount() <= rank) return Math.max(0, Math.min(max, Math.round(MAPPING.value(bin.getIndex()))));
            above += bin.getCount();
        }
        return 0L; // the rank falls among the zeros (DDSketch's zero count)
    }

    /** The most frequent readiers, most first (ties: lower thread id first), as decimal ids. */
    private Map<String, Long> topReadiers() {
        Map<String, Long> top = new LinkedHashMap<>();
        if (readiers == null) return top;
        // one pass keeping the best five in order: a thread may have been readied by thousands
        int[] ids = new int[TOP_READIERS];
        long[] counts = new long[TOP_READIERS];
        int n = 0;
        for (Int2LongMap.Entry e : readiers.int2LongEntrySet()) {
            int id = e.getIntKey();
            long c = e.getLongValue();
            int at = n;
            while (at > 0 && (counts[at - 1] < c || (counts[at - 1] == c && ids[at - 1] > id))) at--;
            if (at >= TOP_READIERS) continue;
            int last = Math.min(n, TOP_READIERS - 1);
            for (int k = last; k > at; k--) {
                ids[k] = ids[k - 1];
                counts[k] = counts[k - 1];
            }
            ids[at] = id;
            counts[at] = c;
            if (n < TOP_READIERS) n++;
        }
        for (int i = 0; i < n; i++) top.put(Integer.toString(ids[i]), counts[i]);
        return top;
    }

    /** The statistics, labelled; window bounds as given (whole session: first and last switch). */
    public ThreadStats toStats(String session, String host, int tid, Integer pid, String processName, String threadName,
                               long windowStart, long windowEnd, boolean isFinal) {
        return toStats(session, host, tid, pid, processName, threadName, windowStart, windowEnd, isFinal, true);
    }

    /**
     * {@link #toStats}, the sketches' bytes left out unless {@code sketches}: a row for the query store, which shows
     * no sketch (their bytes were most of a row's cost to make).
     */
    public ThreadStats toStats(String session, String host, int tid, Integer pid, String processName, String threadName,
                               long windowStart, long windowEnd, boolean isFinal, boolean sketches) {
        Map<String, Long> reasons = new LinkedHashMap<>();
        for (int i = 0; i < 64; i++) if (waitReasons[i] > 0) reasons.put(KernelEnums.waitReason(i), waitReasons[i]);
        List<Long> hist = new ArrayList<>(32);
        for (long c : priorityHistogram) hist.add(c);
        List<Long> pmc = null;
        if (pmcDeltas != null) {
            pmc = new ArrayList<>(pmcDeltas.length);
            for (long d : pmcDeltas) pmc.add(d);
        }
        boolean waited = waitCount > 0;
        boolean prio = priorityCount > 0;
        Long[] wait = quantiles(waits, waitCount, waitMin, waitMax);
        DDSketch readies = split == null ? null : split.merged();
        Long[] ready = quantiles(readies, readyCount, 0, readyMax);
        // the record's setters, not its builder: the builder checks each field and fills defaults, per row and in code the JIT compiles
        ThreadStats s = new ThreadStats();
        s.setSession(session);
        s.setHost(host);
        s.setThreadId(tid);
        s.setProcessId(pid);
        s.setProcessName(processName);
        s.setThreadName(threadName);
        s.setWindowStartNanos(windowStart);
        s.setWindowEndNanos(windowEnd);
        s.setSwitchInCount(switchIn);
        s.setSwitchOutCount(switchOut);
        s.setVoluntarySwitchOutCount(voluntary);
        s.setInvoluntarySwitchOutCount(involuntary);
        s.setWaitReasonCounts(reasons);
        s.setWaitReasonBitMap(waitReasonBitMap);
        s.setWaitCount(waitCount);
        s.setWaitSumNanos(waitSum);
        s.setWaitMinNanos(waited ? waitMin : null);
        s.setWaitMaxNanos(waited ? waitMax : null);
        s.setWaitMeanNanos(waited ? (double) waitSum / waitCount : null);
        s.setWaitP50Nanos(wait[0]);
        s.setWaitP90Nanos(wait[1]);
        s.setWaitP99Nanos(wait[2]);
        s.setNewThreadWaitTicksCount(ticksCount);
        s.setNewThreadWaitTicksSum(ticksSum);
        s.setNewThreadWaitTicksMax(ticksCount > 0 ? ticksMax : null);
        s.setRunCount(runCount);
        s.setRunSumNanos(runSum);
        s.setRunMaxNanos(runCount > 0 ? runMax : null);
        s.setPriorityMin(prio ? priorityMin : null);
        s.setPriorityMax(prio ? priorityMax : null);
        s.setPriorityMean(prio ? (double) prioritySum / priorityCount : null);
        s.setPriorityHistogram(hist);
        s.setPmcDeltas(pmc);
        s.setReadyCount(readyCount);
        s.setReadySumNanos(readySum);
        s.setReadyMaxNanos(readyCount > 0 ? readyMax : null);
        s.setReadyP50Nanos(ready[0]);
        s.setReadyP90Nanos(ready[1]);
        s.setReadyP99Nanos(ready[2]);
        s.setTopReadiers(topReadiers());
        s.setFinal$(isFinal);
        s.setComplete(true); // the constructor leaves a boolean false; the stage marks the rows it knows to be incomplete
        s.setWaitSketch(sketches && waitCount > 0 ? SketchBytes.of(waits) : null);
        s.setReadySketch(sketches && readyCount > 0 ? SketchBytes.of(readies) : null);
        s.setRunSketch(sketches && runCount > 0 ? SketchBytes.of(runs) : null);
        (split == null ? NO_READY : split).fill(s, sketches);
        return s;
    }
}
