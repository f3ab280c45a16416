package io.swapstream.aggregate.fleet.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.fleet.FleetGroup;
import io.swapstream.aggregate.fleet.FleetRollup;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.stage.StageSensors;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rollup topology on the test driver: its rows equal the offline roll-up; a window closes by rows' time or wall clock; a late row is counted. */
class RollupTopologyTest {
    static final long WINDOW = 60_000_000_000L;
    @TempDir Path dir;

    TopologyTestDriver driver(long graceMs) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "rollup-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
        StreamsBuilder b = new StreamsBuilder();
        RollupTopology.build(b, RollupSettings.from(Map.of(SwapstreamConfig.ROLLUP_GRACE_MS, String.valueOf(graceMs))), null);
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
        return out;
    }

    @Test
    void theStagesRowsEqualTheOfflineRollupAndALateRowIsCounted() throws Exception {
        List<ThreadStats> whole = new ArrayList<>();
        List<ThreadStats> rows = rows(whole);
        FleetRollup processes = new FleetRollup(FleetGroup.Kind.PROCESS);
        processes.addAll(rows);
        FleetRollup hosts = new FleetRollup(FleetGroup.Kind.HOST);
        hosts.addAll(rows);
        try (TopologyTestDriver driver = driver(120_000)) {
            TestInputTopic<String, ThreadStats> in = driver.createInputTopic("etw.thread-stats", new StringSerializer(),
                    new SingleObjectAvroSerde<>(ThreadStats.class));
            for (ThreadStats t : whole) in.pipeInput(ThreadStatsFields.key(t.getSession(), t.getThreadId(), null), t);
            for (ThreadStats t : rows) in.pipeInput(ThreadStatsFields.key(t.getSession(), t.getThreadId(), t.getWindowStartNanos()), t);
            var processOut = driver.createOutputTopic("etw.process-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ProcessStats.class));
            var hostOut = driver.createOutputTopic("etw.host-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(HostStats.class));
            assertTrue(processOut.isEmpty(), "nothing final within the grace");
            // no row for the grace: every window closes
            driver.advanceWallClockTime(Duration.ofMinutes(3));
            List<ProcessStats> p = new ArrayList<>(processOut.readValuesToList());
            List<HostStats> h = new ArrayList<>(hostOut.readValuesToList());
            p.sort(java.util.Comparator.comparingLong(ProcessStats::getWindowStartNanos).thenComparing(x -> String.valueOf(x.getProcessName())));
            h.sort(java.util.Comparator.comparingLong(HostStats::getWindowStartNanos).thenComparing(x -> x.getHost()));
            List<ProcessStats> expected = new ArrayList<>(processes.processRows());
            expected.sort(java.util.Comparator.comparingLong(ProcessStats::getWindowStartNanos).thenComparing(x -> String.valueOf(x.getProcessName())));
            assertEquals(expected, p);
            assertEquals(hosts.hostRows(), h);
            // a row for a closed window: counted, logged, not merged
            ThreadStats late = rows.get(0);
            in.pipeInput(ThreadStatsFields.key(late.getSession(), late.getThreadId(), late.getWindowStartNanos()), late);
            driver.advanceWallClockTime(Duration.ofMinutes(3));
            assertTrue(processOut.isEmpty() && hostOut.isEmpty(), "no row again");
            assertEquals(2.0, metric(driver, StageSensors.ROLLUP_LATE_ROWS + "-total"), "late for both roll-ups");
        }
    }

    @Test
    void aWindowClosesWhenTheRowsPassItsEndPlusTheGrace() throws Exception {
        List<ThreadStats> rows = rows(new ArrayList<>());
        long first = rows.stream().mapToLong(ThreadStats::getWindowStartNanos).min().orElseThrow();
        try (TopologyTestDriver driver = driver(60_000)) {
            TestInputTopic<String, ThreadStats> in = driver.createInputTopic("etw.thread-stats", new StringSerializer(),
                    new SingleObjectAvroSerde<>(ThreadStats.class));
            for (ThreadStats t : rows) in.pipeInput(ThreadStatsFields.key(t.getSession(), t.getThreadId(), t.getWindowStartNanos()), t);
            var hostOut = driver.createOutputTopic("etw.host-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(HostStats.class));
            assertTrue(hostOut.isEmpty());
            // a row of a window that starts a minute after the first one's end: the rows' time passed that end plus the grace
            ThreadStats later = ThreadStats.newBuilder(rows.get(0)).setWindowStartNanos(first + 2 * WINDOW)
                    .setWindowEndNanos(first + 3 * WINDOW).build();
            in.pipeInput(ThreadStatsFields.key(later.getSession(), later.getThreadId(), later.getWindowStartNanos()), later);
            List<HostStats> out = hostOut.readValuesToList();
            assertEquals(3, out.size(), "each host's first window");
            assertTrue(out.stream().allMatch(x -> x.getWindowStartNanos() == first && x.getFinal$()));
        }
    }

    static double metric(TopologyTestDriver driver, String name) {
        return driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals(StageSensors.GROUP) && e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }
}
