package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.KernelEnums;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.ScheduleRecorder;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionStatisticsTest {
    @TempDir Path dir;

    static SwitchRow sw(long t, int cpu, int old, Integer oldPri, String state, String reason, Integer nw, Long ticks,
                            Long since, Long run) {
        return new SwitchRow("s", "h", cpu, t, t, "CSWITCH", old, oldPri, state, reason, null, nw, null, ticks,
                null, since, run, null, null, null, null, null, null, null, null, null);
    }

    /** Windows of 100 ns; every expected number below is worked out by hand. */
    @Test
    void windowBoundary() {
        SessionStatistics st = new SessionStatistics(100);
        st.accept(sw(50, 0, 0, null, null, null, 7, 0L, null, null));            // 7 in at 50 (window 0)
        st.accept(sw(99, 0, 7, 9, "Waiting", "WrQueue", 8, 1L, null, 49L));     // 7 out at 99 (window 0), run 49
        st.accept(sw(100, 1, 0, null, null, null, 7, 2L, 1L, null));             // 7 in at 100 (window 100): waited 1
        st.accept(sw(250, 1, 7, 11, "Ready", null, 0, null, null, 150L));        // 7 out at 250 (window 200), run 150
        List<ThreadStats> w = st.windowed();
        Map<String, ThreadStats> by = new HashMap<>();
        w.forEach(t -> by.put(t.getWindowStartNanos() + "/" + t.getThreadId(), t));
        ThreadStats w0 = by.get("0/7");
        assertEquals(100, w0.getWindowEndNanos());
        assertEquals(1, w0.getSwitchInCount());
        assertEquals(1, w0.getSwitchOutCount());
        assertEquals(0, w0.getWaitCount());
        assertEquals(1, w0.getVoluntarySwitchOutCount());
        assertEquals(Map.of("WrQueue", 1L), w0.getWaitReasonCounts());
        assertEquals(1L << 15, w0.getWaitReasonBitMap());
        assertEquals(49, w0.getRunSumNanos());
        ThreadStats w1 = by.get("100/7");
        assertEquals(1, w1.getSwitchInCount());
        assertEquals(0, w1.getSwitchOutCount());
        assertEquals(1, w1.getWaitCount());
        assertEquals(1L, w1.getWaitMinNanos());
        assertEquals(1L, w1.getWaitP99Nanos());
        assertEquals(2L, w1.getNewThreadWaitTicksMax());
        assertNull(w1.getPriorityMin());
        ThreadStats w2 = by.get("200/7");
        assertEquals(1, w2.getInvoluntarySwitchOutCount());
        assertEquals(150L, w2.getRunMaxNanos());
        assertEquals(11, w2.getPriorityMax());
        assertEquals(1L, w2.getPriorityHistogram().get(11));
        ThreadStats t8 = by.get("0/8");
        assertEquals(1, t8.getSwitchInCount());
        assertEquals(4, w.size(), "idle thread 0 is excluded: " + w);
        ThreadStats whole = st.wholeSession().stream().filter(t -> t.getThreadId() == 7).findFirst().orElseThrow();
        assertEquals(50, whole.getWindowStartNanos());
        assertEquals(250, whole.getWindowEndNanos());
        assertEquals(2, whole.getSwitchInCount());
        assertEquals(2, whole.getSwitchOutCount());
        assertEquals(199, whole.getRunSumNanos());
        assertEquals(10.0, whole.getPriorityMean());
        assertEquals(2L, whole.getNewThreadWaitTicksSum()); // 0 at 50, 2 at 100 (the 1 at 99 is thread 8's)
    }

    @Test
    void terminatedIsNeitherVoluntaryNorInvoluntary() {
        SessionStatistics st = new SessionStatistics(0);
        st.accept(sw(10, 0, 5, 8, "Terminated", null, 0, null, null, 3L));
        ThreadStats t = st.wholeSession().get(0);
        assertEquals(1, t.getSwitchOutCount());
        assertEquals(0, t.getVoluntarySwitchOutCount() + t.getInvoluntarySwitchOutCount());
    }

    /** Whole-session statistics of a generated trace against a direct computation over its switch list. */
    @Test
    void matchesADirectComputation() throws Exception {
        Path f = dir.resolve("g.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(40_000).withMode("cswitch").withPmc(2),
                MaximumWaitReason.forBuild(19041));
        List<SwitchRow> all = new ArrayList<>();
        SessionStatistics st = new SessionStatistics(0);
        SessionDecoder.decodeFile(f, "h", null, s -> { all.add(s); st.accept(s); }, null);
        List<ThreadStats> stats = st.wholeSession();
        assertTrue(stats.size() > 20);
        Map<Integer, long[]> lastPmc = new HashMap<>();
        Map<Integer, long[]> pmcSum = new HashMap<>();
        for (SwitchRow s : all) {
            long[] now = s.pmcCounters().stream().mapToLong(Long::longValue).toArray();
            long[] prev = lastPmc.put(s.cpu(), now);
            if (prev != null && s.oldThreadId() != 0 && s.oldThreadRunNanos() != null) {
                long[] sum = pmcSum.computeIfAbsent(s.oldThreadId(), k -> new long[2]);
                for (int i = 0; i < 2; i++) sum[i] += now[i] - prev[i];
            }
        }
        for (ThreadStats t : stats) {
            int tid = t.getThreadId();
            List<Long> waits = new ArrayList<>();
            long in = 0, out = 0, vol = 0, invol = 0, runs = 0, runSum = 0, runMax = Long.MIN_VALUE, ticksN = 0, ticksSum = 0;
            long bitmap = 0, prioN = 0, prioSum = 0;
            long[] hist = new long[32];
            Map<String, Long> reasons = new HashMap<>();
            long first = Long.MAX_VALUE, last = Long.MIN_VALUE;
            for (SwitchRow s : all) {
                if (s.newThreadId() != null && s.newThreadId() == tid) {
                    in++;
                    first = Math.min(first, s.timeNanos());
                    last = Math.max(last, s.timeNanos());
                    if (s.newThreadTimeSinceLastNanos() != null) waits.add(s.newThreadTimeSinceLastNanos());
                    if (s.newThreadWaitTicks() != null) { ticksN++; ticksSum += s.newThreadWaitTicks(); }
                }
                if (s.oldThreadId() == tid) {
                    out++;
                    first = Math.min(first, s.timeNanos());
                    last = Math.max(last, s.timeNanos());
                    if ("Waiting".equals(s.oldThreadState())) {
                        vol++;
                        reasons.merge(s.oldThreadWaitReason(), 1L, Long::sum);
                        bitmap |= 1L << KernelEnums.waitReasonValue(s.oldThreadWaitReason());
                    } else if (!"Terminated".equals(s.oldThreadState())) {
                        invol++;
                    }
                    if (s.oldThreadRunNanos() != null) { runs++; runSum += s.oldThreadRunNanos(); runMax = Math.max(runMax, s.oldThreadRunNanos()); }
                    prioN++;
                    prioSum += s.oldThreadPriority();
                    hist[s.oldThreadPriority()]++;
                }
            }
            String at = "tid " + tid;
            assertEquals(in, t.getSwitchInCount(), at);
            assertEquals(out, t.getSwitchOutCount(), at);
            assertEquals(vol, t.getVoluntarySwitchOutCount(), at);
            assertEquals(invol, t.getInvoluntarySwitchOutCount(), at);
            assertEquals(reasons, t.getWaitReasonCounts(), at);
            assertEquals(bitmap, t.getWaitReasonBitMap(), at);
            assertEquals(first, t.getWindowStartNanos(), at);
            assertEquals(last, t.getWindowEndNanos(), at);
            assertEquals(waits.size(), t.getWaitCount(), at);
            assertEquals(waits.stream().mapToLong(Long::longValue).sum(), t.getWaitSumNanos(), at);
            assertEquals(ticksN, t.getNewThreadWaitTicksCount(), at);
            assertEquals(ticksSum, t.getNewThreadWaitTicksSum(), at);
            assertEquals(runs, t.getRunCount(), at);
            assertEquals(runSum, t.getRunSumNanos(), at);
            if (runs > 0) assertEquals(runMax, t.getRunMaxNanos(), at);
            if (prioN > 0) assertEquals((double) prioSum / prioN, t.getPriorityMean(), 1e-9, at);
            for (int p = 0; p < 32; p++) assertEquals(hist[p], t.getPriorityHistogram().get(p), at);
            long[] pmc = pmcSum.get(tid);
            if (pmc != null) assertEquals(List.of(pmc[0], pmc[1]), t.getPmcDeltas(), at);
            if (!waits.isEmpty()) {
                waits.sort(null);
                assertEquals(waits.get(0), t.getWaitMinNanos(), at);
                assertEquals(waits.get(waits.size() - 1), t.getWaitMaxNanos(), at);
                assertWithinOnePercent(waits, 0.50, t.getWaitP50Nanos(), at);
                assertWithinOnePercent(waits, 0.90, t.getWaitP90Nanos(), at);
                assertWithinOnePercent(waits, 0.99, t.getWaitP99Nanos(), at);
            }
        }
    }

    /**
     * A compact trace whose processors log thread events while their batches are open: its
     * statistics, whole-session and per 10 s window, against a direct computation over what the
     * simulated scheduler decided, in time order (ScheduleRecorder), not over decoded rows.
     */
    @Test
    void compactTraceWithThreadEventsMatchesTheSchedule() throws Exception {
        assertStatisticsMatchTheSchedule(dir.resolve("ordered.etl"),
                GeneratorOptions.defaults().withSwitches(60_000).withShape(8, 6, 5).withSeed(21));
    }

    /** The same for CSwitch events, whose idle wake-ups also carry the C-state they left (counted by C-state). */
    @Test
    void cswitchTraceSplitsReadyTimeAsTheScheduleDid() throws Exception {
        assertStatisticsMatchTheSchedule(dir.resolve("cswitch.etl"),
                GeneratorOptions.defaults().withSwitches(40_000).withShape(4, 6, 5).withSeed(23).withMode("cswitch"));
    }

    /**
     * The same where a processor sits idle for 40 s in a session logging to a file: its buffer reaches
     * the file more than 30 s after later events of the others, and every window is still exact, with
     * a flush timer or without.
     */
    @Test
    void anIdleProcessorsLateBufferChangesNoStatistic() throws Exception {
        long second = 10_000_000L;
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(40_000).withShape(4, 2, 2).withSeed(8)
                .withQuietSpell(new GeneratorOptions.QuietSpell(1, 5 * second, 40 * second));
        Path f = dir.resolve("idle.etl");
        assertStatisticsMatchTheSchedule(f, o);
        assertTrue(BufferLateness.of(f).max() >= 30 * second, BufferLateness.of(f).max() + " ticks");
        assertStatisticsMatchTheSchedule(dir.resolve("idle-1s.etl"), o.withFlushTimer(second));
    }

    void assertStatisticsMatchTheSchedule(Path f, GeneratorOptions o) throws Exception {
        ScheduleRecorder decided = new ScheduleRecorder();
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()), decided);
        long window = 10_000_000_000L;
        SessionStatistics whole = new SessionStatistics(0);
        SessionStatistics windowed = new SessionStatistics(window);
        SessionDecoder.decodeFile(f, "h", null, s -> { whole.accept(s); windowed.accept(s); }, null);
        long startNanos = (o.startTimeFileTime() - 116444736000000000L) * 100;
        java.util.function.LongUnaryOperator nanos = ts -> startNanos + (ts - TraceGenerator.TS0) * 100;
        List<ScheduleRecorder.Switch> truth = decided.inTimeOrder();
        boolean cStates = o.mode().equals("cswitch");
        assertSameStatistics(direct(truth, 0, nanos, cStates), whole.wholeSession(), 0);
        assertSameStatistics(direct(truth, window, nanos, cStates), windowed.windowed(), window);
        if (cStates) {
            // the simulator's idle processors sink into C1 to C3: every depth is there, with its wake-ups
            Map<String, Long> all = new HashMap<>();
            whole.wholeSession().forEach(t -> t.getReadyIdleWakeByCState().forEach((c, n) -> all.merge(c.toString(), n, Long::sum)));
            assertEquals(java.util.Set.of("C1", "C2", "C3"), all.keySet(), all.toString());
        }
        // with windows, the whole session is the closed windows merged: the same rows, sketches included
        assertEquals(whole.wholeSession(), windowed.wholeSession());
    }

    /** A switch older than the open window counts in the whole session only, merged windows or not. */
    @Test
    void aLateSwitchCountsInTheWholeSessionOnly() {
        SessionStatistics whole = new SessionStatistics(0);
        SessionStatistics windowed = new SessionStatistics(100);
        for (SessionStatistics st : List.of(whole, windowed)) {
            st.accept(sw(50, 0, 0, null, null, null, 7, 0L, null, null));
            st.accept(sw(250, 0, 7, 9, "Waiting", "WrQueue", 8, 1L, 5L, 200L));
            st.accept(sw(120, 1, 0, null, null, null, 7, 2L, 3L, null)); // late: window 100 closed at 250
        }
        assertEquals(whole.wholeSession(), windowed.wholeSession());
        ThreadStats t7 = windowed.wholeSession().stream().filter(t -> t.getThreadId() == 7).findFirst().orElseThrow();
        assertEquals(2, t7.getSwitchInCount());
        assertEquals(3L, t7.getWaitSumNanos());
        long windowedIns = windowed.windowed().stream().filter(t -> t.getThreadId() == 7).mapToLong(ThreadStats::getSwitchInCount).sum();
        assertEquals(1, windowedIns, "the late switch-in is in no window");
    }

    /**
     * What the statistics must be, computed straight from the decisions, per thread (and window) key:
     * in, out, voluntary, involuntary, waits n/sum/min/max, runs n/sum/max, priority min/max, ready
     * n/sum/max; and the readying threads with the switch-ins each readied.
     */
    record Direct(Map<String, long[]> numbers, Map<String, Map<Integer, Long>> readiers, Map<String, Map<String, Long>> cStateWakes) {}

    /**
     * {@code cStates}: the trace logs CSwitch events, whose idle wake-ups carry the C-state they left and
     * whose last switch on each processor names its new thread.
     */
    static Direct direct(List<ScheduleRecorder.Switch> truth, long window, java.util.function.LongUnaryOperator nanos, boolean cStates) {
        Map<String, long[]> m = new HashMap<>();
        Map<String, Map<String, Long>> cStateWakes = new HashMap<>();
        Map<String, Map<Integer, Long>> readiers = new HashMap<>();
        // a compact trace names a switch's new thread in the next switch on its processor: each processor's last has none
        Map<Integer, ScheduleRecorder.Switch> lastOnCpu = new HashMap<>();
        for (ScheduleRecorder.Switch s : truth) lastOnCpu.put(s.cpu(), s);
        for (ScheduleRecorder.Switch s : truth) {
            long t = nanos.applyAsLong(s.ts());
            String w = window > 0 ? "/" + Math.floorDiv(t, window) * window : "";
            if (s.newTid() != 0 && (cStates || lastOnCpu.get(s.cpu()) != s)) {
                long[] a = m.computeIfAbsent(s.newTid() + w, k -> fresh());
                a[0]++;
                if (s.newThreadTimeSinceLast() != null) {
                    long v = s.newThreadTimeSinceLast() * 100;
                    a[4]++;
                    a[5] += v;
                    a[6] = Math.min(a[6], v);
                    a[7] = Math.max(a[7], v);
                }
                if (s.newThreadReady() != null) {
                    long v = s.newThreadReady() * 100;
                    a[13]++;
                    a[14] += v;
                    a[15] = Math.max(a[15], v);
                }
                // the ready split: from the idle thread (a processor woken, a[16..18]), or contended (a[19..21])
                if (s.newThreadReady() != null) {
                    long v = s.newThreadReady() * 100;
                    int k = s.oldTid() == 0 ? 16 : 19;
                    a[k]++;
                    a[k + 1] += v;
                    a[k + 2] = Math.max(a[k + 2], v);
                    if (s.oldTid() == 0 && cStates) {
                        cStateWakes.computeIfAbsent(s.newTid() + w, x -> new HashMap<>())
                                .merge("C" + s.detail().previousCStateOrRank(), 1L, Long::sum);
                    }
                }
                // readying threads, as the simulator knew them
                if (s.readier() != null) readiers.computeIfAbsent(s.newTid() + w, k -> new HashMap<>()).merge(s.readier(), 1L, Long::sum);
            }
            if (s.oldTid() != 0) {
                long[] a = m.computeIfAbsent(s.oldTid() + w, k -> fresh());
                a[1]++;
                if (s.oldState() == 5) a[2]++;
                else if (s.oldState() != 4) a[3]++;
                if (s.oldThreadRun() != null) {
                    a[8]++;
                    a[9] += s.oldThreadRun() * 100;
                    a[10] = Math.max(a[10], s.oldThreadRun() * 100);
                }
                a[11] = Math.min(a[11], s.oldPriority());
                a[12] = Math.max(a[12], s.oldPriority());
            }
        }
        return new Direct(m, readiers, cStateWakes);
    }

    static long[] fresh() {
        return new long[] {0, 0, 0, 0, 0, 0, Long.MAX_VALUE, Long.MIN_VALUE, 0, 0, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE,
            0, 0, Long.MIN_VALUE, 0, 0, Long.MIN_VALUE, 0, 0, Long.MIN_VALUE};
    }

    static void assertSameStatistics(Direct direct, List<ThreadStats> got, long window) {
        Map<String, long[]> expected = direct.numbers();
        assertEquals(expected.size(), got.size());
        for (ThreadStats t : got) {
            String key = t.getThreadId() + (window > 0 ? "/" + t.getWindowStartNanos() : "");
            long[] e = expected.get(key);
            assertTrue(e != null, key);
            long[] g = {t.getSwitchInCount(), t.getSwitchOutCount(), t.getVoluntarySwitchOutCount(), t.getInvoluntarySwitchOutCount(),
                t.getWaitCount(), t.getWaitSumNanos(), t.getWaitMinNanos() == null ? Long.MAX_VALUE : t.getWaitMinNanos(),
                t.getWaitMaxNanos() == null ? Long.MIN_VALUE : t.getWaitMaxNanos(), t.getRunCount(), t.getRunSumNanos(),
                t.getRunMaxNanos() == null ? Long.MIN_VALUE : t.getRunMaxNanos(),
                t.getPriorityMin() == null ? Long.MAX_VALUE : t.getPriorityMin(), t.getPriorityMax() == null ? Long.MIN_VALUE : t.getPriorityMax(),
                t.getReadyCount(), t.getReadySumNanos(), t.getReadyMaxNanos() == null ? Long.MIN_VALUE : t.getReadyMaxNanos(),
                t.getReadyIdleWakeCount(), t.getReadyIdleWakeSumNanos(), t.getReadyIdleWakeMaxNanos() == null ? Long.MIN_VALUE : t.getReadyIdleWakeMaxNanos(),
                t.getReadyContendedCount(), t.getReadyContendedSumNanos(),
                t.getReadyContendedMaxNanos() == null ? Long.MIN_VALUE : t.getReadyContendedMaxNanos()};
            assertEquals(java.util.Arrays.toString(e), java.util.Arrays.toString(g), key);
            Map<String, Long> cStates = new HashMap<>();
            t.getReadyIdleWakeByCState().forEach((c, n) -> cStates.put(c.toString(), n));
            assertEquals(direct.cStateWakes().getOrDefault(key, Map.of()), cStates, key);
            // the five most frequent readying threads (ties: lower id first), with their counts
            Map<Integer, Long> by = direct.readiers().getOrDefault(key, Map.of());
            Map<String, Long> top = new java.util.LinkedHashMap<>();
            by.entrySet().stream().sorted((x, y) -> x.getValue().equals(y.getValue()) ? Integer.compare(x.getKey(), y.getKey())
                    : Long.compare(y.getValue(), x.getValue())).limit(5).forEach(x -> top.put(Integer.toString(x.getKey()), x.getValue()));
            assertEquals(top, t.getTopReadiers(), key);
            assertEquals(new java.util.ArrayList<>(top.keySet()), new java.util.ArrayList<>(t.getTopReadiers().keySet().stream().map(Object::toString).toList()), key);
            for (Long v : new Long[] {t.getWaitMinNanos(), t.getWaitMaxNanos(), t.getWaitP50Nanos(), t.getWaitP90Nanos(), t.getWaitP99Nanos(),
                t.getRunMaxNanos(), t.getWaitSumNanos(), t.getRunSumNanos(), t.getReadyMaxNanos(), t.getReadyP50Nanos(),
                t.getReadyP90Nanos(), t.getReadyP99Nanos(), t.getReadySumNanos()}) {
                assertTrue(v == null || v >= 0, key + ": a negative duration in " + t);
            }
        }
    }

    /** The exact quantile is the sorted value at rank floor(q (n - 1)). */
    static void assertWithinOnePercent(List<Long> sorted, double q, long got, String at) {
        long exact = sorted.get((int) Math.floor(q * (sorted.size() - 1)));
        assertTrue(Math.abs(got - exact) <= 0.01 * exact + 1, at + " p" + q + ": " + got + " vs exact " + exact);
    }
}
