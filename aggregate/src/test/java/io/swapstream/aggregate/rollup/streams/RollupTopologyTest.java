package io.swapstream.aggregate.rollup.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.Rollups;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import io.swapstream.stage.StageSensors;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rollup topology on the test driver: its rows equal the offline roll-up; a window closes when its live hosts
 * have moved past it, at most the maximum wait after the first did, or without rows for the grace; a row that comes
 * later goes into a revision, and the highest revision of every row is the offline roll-up: each row merged once.
 */
class RollupTopologyTest {
    /** Short windows: a trace of seconds spans several. */
    static final long WINDOW = 1_000_000_000L;
    static final long MAX_WAIT_MS = 90_000;
    @TempDir Path dir;

    TopologyTestDriver driver(long graceMs) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "rollup-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
        StreamsBuilder b = new StreamsBuilder();
        RollupTopology.build(b, RollupSettings.from(Map.of(SwapstreamConfig.ROLLUP_GRACE_MS, String.valueOf(graceMs),
                SwapstreamConfig.ROLLUP_MAX_WAIT_MS, String.valueOf(MAX_WAIT_MS))), null);
        return new TopologyTestDriver(b.build(), p);
    }

    /** Three hosts' final window rows, as the aggregate writes them (and its whole-session rows, which the rollup skips). */
    List<ThreadStats> rows(List<ThreadStats> whole) throws Exception {
        List<ThreadStats> out = new ArrayList<>();
        for (int h = 0; h < 3; h++) {
            Path f = dir.resolve("h" + h + ".etl");
            TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(30_000).withSeed(h).withExitRate(0)
                    .withStartTime(134_000_000_000_000_000L + 35 * 10_000_000L), 0x28);
            SessionStatistics s = new SessionStatistics(WINDOW);
            SessionDecoder.decodeBatches(f, "host" + h, null, s::accept, null);
            s.closeAll();
            out.addAll(s.windowed());
            whole.addAll(s.wholeSession());
        }
        out.sort(Comparator.comparingLong(ThreadStats::getWindowStartNanos));
        return out;
    }

    static void pipe(TestInputTopic<String, ThreadStats> in, List<ThreadStats> rows) {
        for (ThreadStats t : rows) in.pipeInput(ThreadStatsFields.key(t.getSession(), t.getThreadId(), t.getWindowStartNanos()), t);
    }

    static List<ThreadStats> of(List<ThreadStats> rows, String host, long windowStart) {
        return rows.stream().filter(t -> (host == null || t.getHost().toString().equals(host))
                && (windowStart < 0 || t.getWindowStartNanos() == windowStart)).toList();
    }

    /** The highest revision of each row, as a reader keeps them. */
    static <V> Map<String, V> latest(List<KeyValue<String, V>> out, ToIntFunction<V> revision) {
        Map<String, V> kept = new TreeMap<>();
        for (KeyValue<String, V> kv : out) kept.merge(kv.key, kv.value, (a, b) -> revision.applyAsInt(b) >= revision.applyAsInt(a) ? b : a);
        return kept;
    }

    static List<ProcessStats> processRows(Collection<ProcessStats> rows) {
        return rows.stream().map(r -> ProcessStats.newBuilder(r).setRevision(0).setAdded(null).build())
                .sorted(Comparator.comparingLong(ProcessStats::getWindowStartNanos).thenComparing(x -> String.valueOf(x.getProcessName())))
                .toList();
    }

    static List<HostStats> hostRows(Collection<HostStats> rows) {
        return rows.stream().map(r -> HostStats.newBuilder(r).setRevision(0).setAdded(null).build())
                .sorted(Comparator.comparingLong(HostStats::getWindowStartNanos).thenComparing(x -> x.getHost().toString()))
                .toList();
    }

    @Test
    void theStagesRowsEqualTheOfflineRollupAndARowAgainGoesIntoARevision() throws Exception {
        List<ThreadStats> whole = new ArrayList<>();
        List<ThreadStats> rows = rows(whole);
        Rollups processes = new Rollups(RollupGroup.Kind.PROCESS);
        processes.addAll(rows);
        Rollups hosts = new Rollups(RollupGroup.Kind.HOST);
        hosts.addAll(rows);
        try (TopologyTestDriver driver = driver(120_000)) {
            TestInputTopic<String, ThreadStats> in = driver.createInputTopic("etw.thread-stats", new StringSerializer(),
                    new SingleObjectAvroSerde<>(ThreadStats.class));
            for (ThreadStats t : whole) in.pipeInput(ThreadStatsFields.key(t.getSession(), t.getThreadId(), null), t);
            // a tombstone, which no aggregate writes: skipped with its reason, and the stage goes on
            in.pipeInput("someone:log:1/7", (ThreadStats) null);
            // window by window, every host's rows: as a fleet's aggregate writes them
            pipe(in, rows);
            var processOut = driver.createOutputTopic("etw.process-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ProcessStats.class));
            var hostOut = driver.createOutputTopic("etw.host-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(HostStats.class));
            // no row for the grace: every window closes
            driver.advanceWallClockTime(Duration.ofMinutes(3));
            List<KeyValue<String, ProcessStats>> p = processOut.readKeyValuesToList();
            List<KeyValue<String, HostStats>> h = hostOut.readKeyValuesToList();
            assertTrue(p.stream().allMatch(kv -> kv.value.getRevision() == 0 && kv.value.getFinal$()), "every host was there: no revision");
            assertEquals(processRows(processes.processRows()), processRows(latest(p, ProcessStats::getRevision).values()));
            assertEquals(hostRows(hosts.hostRows()), hostRows(latest(h, HostStats::getRevision).values()));
            // a row for a closed window again (a host sent it again): merged into revision 1 of its groups' rows, and counted
            ThreadStats again = rows.get(0);
            pipe(in, List.of(again));
            driver.advanceWallClockTime(Duration.ofMinutes(3));
            List<KeyValue<String, ProcessStats>> revised = processOut.readKeyValuesToList();
            assertEquals(1, revised.size(), "one process row revised");
            assertEquals(1, revised.get(0).value.getRevision());
            long before = p.stream().filter(kv -> kv.key.equals(revised.get(0).key)).findFirst().orElseThrow().value.getThreads();
            assertEquals(before + 1, revised.get(0).value.getThreads(), "merged into what was there");
            assertEquals(1, hostOut.readKeyValuesToList().size(), "one host row revised");
            assertEquals(2.0, metric(driver, StageSensors.ROLLUP_LATE_ROWS + "-total"), "late for both roll-ups");
            assertEquals(2.0, metric(driver, StageSensors.ROLLUP_REVISIONS_OUT + "-total"));
        }
    }

    /**
     * Three hosts, one behind the others: its first window's rows, then its trace ingested 10 minutes after the others'.
     * The windows close without it, the maximum wait after the others moved past them, and its rows come into
     * revisions; the highest revision of every row is the offline roll-up of all three hosts, each row merged once.
     */
    @Test
    void aHostBehindTheOthersComesIntoRevisionsOfEveryWindow() throws Exception {
        List<ThreadStats> rows = rows(new ArrayList<>());
        Rollups processes = new Rollups(RollupGroup.Kind.PROCESS);
        processes.addAll(rows);
        Rollups hosts = new Rollups(RollupGroup.Kind.HOST);
        hosts.addAll(rows);
        List<ThreadStats> ahead = rows.stream().filter(t -> !t.getHost().toString().equals("host2")).toList();
        List<ThreadStats> behind = of(rows, "host2", -1);
        long first = behind.get(0).getWindowStartNanos();
        try (TopologyTestDriver driver = driver(600_000)) {
            TestInputTopic<String, ThreadStats> in = driver.createInputTopic("etw.thread-stats", new StringSerializer(),
                    new SingleObjectAvroSerde<>(ThreadStats.class));
            var processOut = driver.createOutputTopic("etw.process-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ProcessStats.class));
            var hostOut = driver.createOutputTopic("etw.host-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(HostStats.class));
            // host2 is live but behind: its first window's rows, then the others' every window
            pipe(in, of(behind, null, first));
            pipe(in, ahead);
            assertTrue(processOut.readKeyValuesToList().isEmpty(), "the windows host2 has not passed wait for it");
            driver.advanceWallClockTime(Duration.ofMinutes(10));
            pipe(in, behind.stream().filter(t -> t.getWindowStartNanos() != first).toList());
            driver.advanceWallClockTime(Duration.ofMinutes(11));
            List<KeyValue<String, ProcessStats>> p = processOut.readKeyValuesToList();
            List<KeyValue<String, HostStats>> h = hostOut.readKeyValuesToList();
            assertTrue(p.stream().anyMatch(kv -> kv.value.getRevision() > 0), "host2's rows came into revisions");
            assertEquals(processRows(processes.processRows()), processRows(latest(p, ProcessStats::getRevision).values()));
            assertEquals(hostRows(hosts.hostRows()), hostRows(latest(h, HostStats::getRevision).values()));
            // each observation once: a window's first row, then what each revision added, sum to the whole
            Map<String, long[]> counted = new java.util.HashMap<>();
            for (KeyValue<String, ProcessStats> kv : p) {
                ProcessStats r = kv.value;
                long[] c = counted.computeIfAbsent(kv.key, k -> new long[5]);
                if (r.getRevision() == 0) {
                    assertEquals(null, r.getAdded(), kv.key);
                    c[0] += r.getReadyCount();
                    c[1] += r.getThreads();
                    c[2] += r.getReadyIdleWakeCount();
                    c[3] += r.getReadyContendedSumNanos();
                    c[4] += r.getReadyIdleWakeByCState().values().stream().mapToLong(Long::longValue).sum();
                } else {
                    c[0] += r.getAdded().getReadyCount();
                    c[1] += r.getAdded().getThreads();
                    c[2] += r.getAdded().getReadyIdleWakeCount();
                    c[3] += r.getAdded().getReadyContendedSumNanos();
                    c[4] += r.getAdded().getReadyIdleWakeByCState().values().stream().mapToLong(Long::longValue).sum();
                }
            }
            for (ProcessStats e : processes.processRows()) {
                long[] c = counted.get(RollupTopology.rowKey(e.getProcessName(), e.getWindowStartNanos()));
                assertEquals(e.getReadyCount(), c[0], "ready times once: " + e.getProcessName());
                assertEquals(e.getThreads(), c[1], "thread rows once: " + e.getProcessName());
                // the ready split too: what a counter of idle wake-ups and contended ready time adds up over revisions
                assertEquals(e.getReadyIdleWakeCount(), c[2], "idle wake-ups once: " + e.getProcessName());
                assertEquals(e.getReadyContendedSumNanos(), c[3], "contended ready time once: " + e.getProcessName());
                assertEquals(e.getReadyIdleWakeByCState().values().stream().mapToLong(Long::longValue).sum(), c[4], e.getProcessName());
            }
            assertTrue(rows.stream().mapToLong(ThreadStats::getWindowStartNanos).distinct().count() > 3, "several windows");
        }
    }

    @Test
    void aWindowClosesOnceEveryLiveHostHasMovedPastItOrTheMaximumWaitAfterTheFirst() throws Exception {
        List<ThreadStats> rows = rows(new ArrayList<>());
        long first = rows.get(0).getWindowStartNanos();
        try (TopologyTestDriver driver = driver(600_000)) {
            TestInputTopic<String, ThreadStats> in = driver.createInputTopic("etw.thread-stats", new StringSerializer(),
                    new SingleObjectAvroSerde<>(ThreadStats.class));
            var hostOut = driver.createOutputTopic("etw.host-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(HostStats.class));
            var processOut = driver.createOutputTopic("etw.process-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ProcessStats.class));
            pipe(in, of(rows, null, first));
            assertTrue(hostOut.isEmpty() && processOut.isEmpty(), "no host has moved past the first window");
            // host0 and host1 move on; host2 is live and has not
            pipe(in, of(rows, "host0", first + WINDOW));
            pipe(in, of(rows, "host1", first + WINDOW));
            assertTrue(processOut.isEmpty(), "the process roll-up waits for host2");
            pipe(in, of(rows, "host2", first + WINDOW));
            List<ProcessStats> out = processOut.readValuesToList();
            assertTrue(!out.isEmpty() && out.stream().allMatch(x -> x.getWindowStartNanos() == first && x.getFinal$() && x.getRevision() == 0),
                    "every live host has moved past the first window: it closed");
            assertEquals(3, hostOut.readValuesToList().stream().filter(x -> x.getWindowStartNanos() == first).count(), "each host's first window");
            // the second window: two hosts move past it, the third does not; it closes the maximum wait after the first did
            pipe(in, of(rows, "host0", first + 2 * WINDOW));
            pipe(in, of(rows, "host1", first + 2 * WINDOW));
            assertTrue(processOut.isEmpty());
            driver.advanceWallClockTime(Duration.ofMillis(MAX_WAIT_MS + 10_000));
            List<ProcessStats> later = processOut.readValuesToList();
            assertTrue(!later.isEmpty() && later.stream().allMatch(x -> x.getWindowStartNanos() == first + WINDOW), "closed at the maximum wait");
        }
    }

    static double metric(TopologyTestDriver driver, String name) {
        return driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals(StageSensors.GROUP) && e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }
}
