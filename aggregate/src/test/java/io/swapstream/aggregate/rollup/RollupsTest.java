package io.swapstream.aggregate.rollup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The roll-ups of three generated hosts over one minute edge (the same process names on each, ReadyThread
 * and process events) against a direct computation over every switch of every host: counts, sums and
 * maxima exactly, percentiles within DDSketch's 1% of an exact order statistic.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RollupsTest {
    static final long WINDOW = 60_000_000_000L;
    final List<ThreadStats> windowRows = new ArrayList<>();
    /** Every switch of every host, with the process name of its threads. */
    final List<SwitchRow> switches = new ArrayList<>();
    final Map<String, String> processOf = new HashMap<>(); // host/tid -> process name

    @BeforeAll
    void hosts(@TempDir Path dir) throws Exception {
        for (int h = 0; h < 3; h++) {
            Path f = dir.resolve("host" + h + ".etl");
            // 14:13:55 UTC: the traces cross 14:14:00; no thread exits, so a thread id names one thread
            GeneratorOptions o = GeneratorOptions.defaults().withSwitches(40_000 + 10_000 * h).withSeed(100 + h).withExitRate(0)
                    .withStartTime(134_000_000_000_000_000L + 35 * 10_000_000L);
            TraceGenerator.generate(f, o, 0x28);
            String host = "host" + h;
            SessionStatistics stats = new SessionStatistics(WINDOW);
            SessionDecoder.decodeBatches(f, host, null, stats::accept, null);
            stats.closeAll();
            windowRows.addAll(stats.windowed());
            SessionDecoder.decodeFile(f, host, null, switches::add, t -> processOf.put(host + "/" + t.threadId(), t.processName()));
        }
    }

    /** What the direct computation keeps of a group in a window. */
    static final class Exact {
        final Set<String> hosts = new HashSet<>();
        final Set<String> sessions = new HashSet<>();
        final Set<String> threads = new HashSet<>();
        final Map<String, Long> readyBy = new HashMap<>();
        long switchIn;
        long runSum;
        final List<Long> waits = new ArrayList<>();
        final List<Long> readies = new ArrayList<>();
    }

    Map<String, Exact> direct(RollupGroup.Kind kind) {
        Map<String, Exact> out = new HashMap<>();
        for (SwitchRow s : switches) {
            long window = Math.floorDiv(s.timeNanos(), WINDOW) * WINDOW;
            if (s.newThreadId() != null && s.newThreadId() != 0) {
                Exact e = group(out, kind, s, s.newThreadId(), window);
                e.switchIn++;
                if (s.newThreadTimeSinceLastNanos() != null) e.waits.add(s.newThreadTimeSinceLastNanos());
                if (s.newThreadReadyNanos() != null) {
                    e.readies.add(s.newThreadReadyNanos());
                    e.readyBy.merge(member(kind, s, s.newThreadId()), s.newThreadReadyNanos(), Long::sum);
                }
            }
            if (s.oldThreadId() != 0) {
                Exact e = group(out, kind, s, s.oldThreadId(), window);
                if (s.oldThreadRunNanos() != null) e.runSum += s.oldThreadRunNanos();
            }
        }
        return out;
    }

    private Exact group(Map<String, Exact> out, RollupGroup.Kind kind, SwitchRow s, int tid, long window) {
        String name = kind == RollupGroup.Kind.HOST ? s.host() : processOf.get(s.host() + "/" + tid);
        Exact e = out.computeIfAbsent(io.swapstream.aggregate.rollup.streams.RollupTopology.rowKey(name, window), k -> new Exact());
        e.hosts.add(s.host());
        e.sessions.add(s.session());
        e.threads.add(s.host() + "/" + tid);
        e.readyBy.putIfAbsent(member(kind, s, tid), 0L);
        return e;
    }

    private String member(RollupGroup.Kind kind, SwitchRow s, int tid) {
        return kind == RollupGroup.Kind.PROCESS ? s.host() : Objects.requireNonNullElse(processOf.get(s.host() + "/" + tid), "");
    }

    @Test
    void processRowsEqualADirectComputationOverEverySwitch() {
        Rollups rollup = new Rollups(RollupGroup.Kind.PROCESS);
        rollup.addAll(windowRows);
        Map<String, Exact> direct = direct(RollupGroup.Kind.PROCESS);
        List<ProcessStats> rows = rollup.processRows();
        assertEquals(direct.keySet().size(), rows.size());
        assertTrue(rows.stream().map(ProcessStats::getWindowStartNanos).distinct().count() >= 2, "the minute edge is crossed");
        assertTrue(rows.stream().anyMatch(r -> r.getHosts() == 3 && r.getProcessName() != null), "process names on several hosts");
        assertTrue(rows.stream().mapToLong(ProcessStats::getReadyCount).sum() > 0, "ready times");
        for (ProcessStats r : rows) {
            Exact e = direct.get(io.swapstream.aggregate.rollup.streams.RollupTopology.rowKey(r.getProcessName(), r.getWindowStartNanos()));
            String what = r.getProcessName() + " at " + r.getWindowStartNanos();
            assertEquals(e.hosts.size(), r.getHosts(), what);
            assertEquals(e.sessions.size(), r.getSessions(), what);
            assertEquals(e.threads.size(), r.getThreads(), what);
            assertEquals(e.switchIn, r.getSwitchInCount(), what);
            assertEquals(e.waits.size(), r.getWaitCount(), what);
            assertEquals(e.waits.stream().mapToLong(Long::longValue).sum(), r.getWaitSumNanos(), what);
            assertEquals(e.waits.stream().max(Long::compare).orElse(null), r.getWaitMaxNanos(), what);
            assertEquals(e.readies.size(), r.getReadyCount(), what);
            assertEquals(e.readies.stream().mapToLong(Long::longValue).sum(), r.getReadySumNanos(), what);
            assertEquals(e.readies.stream().max(Long::compare).orElse(null), r.getReadyMaxNanos(), what);
            assertEquals(e.runSum, r.getRunSumNanos(), what);
            assertPercentiles(e.waits, r.getWaitP50Nanos(), r.getWaitP90Nanos(), r.getWaitP99Nanos(), what + " waits");
            assertPercentiles(e.readies, r.getReadyP50Nanos(), r.getReadyP90Nanos(), r.getReadyP99Nanos(), what + " ready");
            assertEquals(top(e.readyBy), r.getTopHosts(), what);
        }
    }

    @Test
    void hostRowsEqualADirectComputationOverEverySwitch() {
        Rollups rollup = new Rollups(RollupGroup.Kind.HOST);
        rollup.addAll(windowRows);
        Map<String, Exact> direct = direct(RollupGroup.Kind.HOST);
        List<HostStats> rows = rollup.hostRows();
        assertEquals(direct.keySet().size(), rows.size());
        for (HostStats r : rows) {
            Exact e = direct.get(io.swapstream.aggregate.rollup.streams.RollupTopology.rowKey(r.getHost(), r.getWindowStartNanos()));
            String what = r.getHost() + " at " + r.getWindowStartNanos();
            assertEquals(e.sessions.size(), r.getSessions(), what);
            assertEquals(e.readyBy.size(), r.getProcesses(), what);
            assertEquals(e.threads.size(), r.getThreads(), what);
            assertEquals(e.switchIn, r.getSwitchInCount(), what);
            assertEquals(e.runSum, r.getRunSumNanos(), what);
            assertEquals(e.readies.size(), r.getReadyCount(), what);
            assertEquals(e.readies.stream().mapToLong(Long::longValue).sum(), r.getReadySumNanos(), what);
            assertEquals(e.readies.stream().max(Long::compare).orElse(null), r.getReadyMaxNanos(), what);
            assertPercentiles(e.readies, r.getReadyP50Nanos(), r.getReadyP90Nanos(), r.getReadyP99Nanos(), what + " ready");
            assertPercentiles(e.waits, null, null, r.getWaitP99Nanos(), what + " waits");
            assertEquals(top(e.readyBy), r.getTopProcesses(), what);
        }
    }

    /** Each percentile within 1% of the exact order statistic at the nearest rank ceil(q·n), or DDSketch's floor(q·(n−1)). */
    static void assertPercentiles(List<Long> values, Long p50, Long p90, Long p99, String what) {
        if (values.isEmpty()) {
            assertEquals(null, p99, what);
            return;
        }
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(Long::compare);
        double[] q = {0.5, 0.9, 0.99};
        Long[] got = {p50, p90, p99};
        for (int i = 0; i < 3; i++) {
            if (got[i] == null && i < 2) continue;
            int n = sorted.size();
            long nearest = sorted.get((int) Math.max(0, Math.ceil(q[i] * n) - 1));
            long below = sorted.get((int) Math.floor(q[i] * (n - 1)));
            long v = got[i];
            boolean close = Math.abs(v - nearest) <= 0.01 * nearest + 1 || Math.abs(v - below) <= 0.01 * below + 1;
            assertTrue(close, what + " p" + Math.round(q[i] * 100) + " " + v + " against " + nearest + " or " + below + " of " + n);
        }
    }

    static Map<String, Long> top(Map<String, Long> all) {
        Map<String, Long> top = new java.util.LinkedHashMap<>();
        all.entrySet().stream().sorted((a, b) -> !a.getValue().equals(b.getValue()) ? Long.compare(b.getValue(), a.getValue())
                : a.getKey().compareTo(b.getKey())).limit(RollupGroup.TOP).forEach(e -> top.put(e.getKey(), e.getValue()));
        return top;
    }
}
