package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stored state of release 0.1.0, written by 0.1.0 itself: its broker's data after a live session
 * was stopped half-way (test resource release-0.1.0/live-session.tar.gz, made by the script beside
 * it), with every stage's changelogs, committed offsets and transactions and the ingester's positions.
 * This build's broker, stages and ingester take it over as an operator's upgrade would (the same
 * options, application id and topics; state restored from the changelogs) and finish the session:
 * every final row equals the offline statistics of the whole file, each once, and the roll-up's too.
 */
class Release010StateIT {
    @TempDir Path dir;

    static final String PREFIX = "r010.";
    static final String HOST = "release010";
    /** The windows 0.1.0's aggregate ran with (make-live-session.sh). */
    static final long WINDOW = 2_000_000_000L;

    @Test
    void thisBuildFinishesASessionRelease010StoppedHalfWay() throws Exception {
        Path broker = Files.createDirectories(dir.resolve("broker"));
        Path fixture = Path.of(Release010StateIT.class.getResource("/release-0.1.0/live-session.tar.gz").toURI());
        Process tar = new ProcessBuilder("tar", "-xzf", fixture.toString(), "-C", broker.toString()).inheritIO().start();
        assertEquals(0, tar.waitFor(), "tar");
        Path whole = broker.resolve("whole.etl");
        Map<String, ThreadStats> expected = LiveSessionIT.offline(whole, HOST, WINDOW);
        List<ThreadStats> windowRows = new ArrayList<>();
        expected.forEach((k, v) -> {
            if (k.split("/").length == 3) windowRows.add(v);
        });
        Map<String, HostStats> expectedHosts = RotationSoakIT.hostRows(windowRows);

        // the records are from the day the fixture was made: the broker's time-based retention would delete them; the
        // controller's port is the one free when it was made, so this run takes a free one of its own
        int port = EmbeddedKafkaBroker.freePort();
        int controller = EmbeddedKafkaBroker.freePort();
        Map<String, String> settings = Map.of("log.retention.ms", "-1",
                "listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller,
                "controller.quorum.bootstrap.servers", "127.0.0.1:" + controller);
        // a broker that cannot start calls Kafka's Exit, which would end this test's JVM and every test in it
        org.apache.kafka.common.utils.Exit.setExitProcedure((code, message) -> {
            throw new IllegalStateException("the broker stopped (" + code + "): " + message);
        });
        org.apache.kafka.common.utils.Exit.setHaltProcedure((code, message) -> {
            throw new IllegalStateException("the broker halted (" + code + "): " + message);
        });
        try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(broker, port, true, settings)) {
            KafkaBroker.Bootstrap k = new KafkaBroker.Bootstrap(kafka.bootstrapServers(), "the broker data release 0.1.0 left");
            LiveSessionIT live = new LiveSessionIT();
            live.dir = dir;
            String session = BufferPublisher.sessionOf(whole, HOST);
            long buffers = Files.size(whole) / 8192;
            try (StageProcess decode = stage("decode", kafka, "--idle-timeout", "3650d");
                 StageProcess aggregate = stage("aggregate", kafka, "--window", "2s", "--emit-interval", "1s");
                 StageProcess rollup = stage("rollup", kafka, "--max-wait", "5s");
                 LiveSessionIT.Rows rows = rowsOf(live, k)) {
                // the host's file, whole now: 0.1.0's ingester had published its first 36 buffers
                Path watched = Files.createDirectories(dir.resolve("traces"));
                Files.copy(whole, watched.resolve(HOST + ".etl"));
                try (StageProcess ingest = StageProcess.start(dir.resolve("ingest.log"), "ingest", "--watch", watched.toString(),
                        "--host-from-file-name", "--quiet", "2s", "--poll", "200ms", "-b", kafka.bootstrapServers(), "--topic-prefix", PREFIX,
                        "--partitions", "1")) {
                    ingest.awaitLog("resuming session " + session + " at buffer 36 ", Duration.ofSeconds(120));
                    ingest.awaitLog("session " + session + " ended after " + buffers + " buffers", Duration.ofSeconds(120));
                    rows.await(expected, Duration.ofSeconds(240));
                }
                LiveSessionIT.assertSameFinals(expected, rows);
                ClusterFaultIT.assertEachBatchOnce(kafka.bootstrapServers(), PREFIX, session);
                ClusterFaultIT.assertOneEndRecord(kafka.bootstrapServers(), PREFIX, session);
                TraceSession ended = null;
                for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(kafka.bootstrapServers(), PREFIX + SwapstreamConfig.SESSIONS)) {
                    TraceSession s = LiveSessionIT.SESSIONS.deserialize("t", r.value());
                    if (s.getEndReason() != null) ended = s;
                }
                assertTrue(ended != null && ended.getComplete(), String.valueOf(ended));
                assertEquals(buffers, ended.getBuffers());
                Map<String, HostStats> rolled = RotationSoakIT.readHostRows(kafka.bootstrapServers(), PREFIX, expectedHosts,
                        Duration.ofSeconds(120));
                assertEquals(expectedHosts.keySet(), rolled.keySet());
                expectedHosts.forEach((key, v) -> assertEquals(RotationSoakIT.withoutSketches(v), RotationSoakIT.comparable(rolled.get(key)), key));
            }
        } finally {
            org.apache.kafka.common.utils.Exit.resetExitProcedure();
            org.apache.kafka.common.utils.Exit.resetHaltProcedure();
        }
    }

    /** A stage of this build as 0.1.0's ran (make-live-session.sh), on a new state directory: its state comes from the changelogs. */
    StageProcess stage(String stage, EmbeddedKafkaBroker kafka, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of(stage, "-b", kafka.bootstrapServers(), "--topic-prefix", PREFIX, "--partitions", "1",
                "--application-id", "r010", "--instance-id", stage + "-1", "--state-dir", dir.resolve(stage).toString(), "--http",
                "127.0.0.1:0"));
        a.addAll(List.of(more));
        return StageProcess.start(dir.resolve(stage + ".log"), a.toArray(String[]::new)).awaitLog(stage + ": running", Duration.ofSeconds(90));
    }

    /** Thread rows as {@link LiveSessionIT.Rows} reads them, on this fixture's topic prefix. */
    static LiveSessionIT.Rows rowsOf(LiveSessionIT live, KafkaBroker.Bootstrap k) {
        return live.new Rows(k, PREFIX);
    }
}
