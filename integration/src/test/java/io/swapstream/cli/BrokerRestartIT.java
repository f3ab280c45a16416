package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.avro.ThreadStats;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single-node broker ({@code swapstream broker}, a process of its own, as are ingest, decode and
 * aggregate) stopped mid-session and started again on the same data directory: the stages ride it
 * out, the final rows equal the offline statistics, each once, and every batch and the end record
 * are on their topics once. A single node killed with SIGKILL is outside what Kafka guarantees
 * (README, "What Swapstream needs from Kafka"); ClusterFaultIT kills a node of three.
 */
class BrokerRestartIT {
    @TempDir Path dir;

    @Test
    void theBrokerStoppedAndRestartedMidSessionLosesAndDoublesNothing() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path data = dir.resolve("kafka");
        Path brokerLog = dir.resolve("broker.log");
        StageProcess broker = StageProcess.start(brokerLog, "broker", "--data-dir", data.toString(), "--port", String.valueOf(port))
                .awaitLog("broker: running", Duration.ofSeconds(60));
        String bootstrap = "127.0.0.1:" + port;
        KafkaBroker.Bootstrap k = new KafkaBroker.Bootstrap(bootstrap, "swapstream broker process");
        LiveSessionIT live = new LiveSessionIT();
        live.dir = dir;
        Path whole = live.trace(400_000);
        Map<String, ThreadStats> expected = LiveSessionIT.offline(whole, "restart");
        Path watched = Files.createDirectories(dir.resolve("traces"));
        StageProcess decode = live.decode(k, dir.resolve("decode-state"));
        StageProcess aggregate = live.aggregate(k, dir.resolve("aggregate-state"));
        StageProcess ingest = live.ingest(k, watched, LiveSessionIT.GATED_QUIET);
        Path file = watched.resolve("restart.etl");
        // the writer waits at half the file for the broker's stop to begin: mid-file, however slow the machine
        try (LiveSessionIT.Rows rows = live.new Rows(k); GatedReplay writer = GatedReplay.start(whole, file, 120, 0.5)) {
            writer.awaitAt(0);
            broker.close(); // SIGTERM: the broker's own clean stop
            writer.pass(0);
            broker = StageProcess.start(brokerLog, "broker", "--data-dir", data.toString(), "--port", String.valueOf(port))
                    .awaitLog("broker: running", Duration.ofSeconds(60));
            writer.join();
            ingest = live.finish(k, watched, ingest, file);
            rows.await(expected, Duration.ofSeconds(180));
            LiveSessionIT.assertSameFinals(expected, rows);
            assertEquals(2, Files.readString(brokerLog).split("broker: running", -1).length - 1, "the broker ran twice");
            String session = BufferPublisher.sessionOf(whole, "restart");
            ClusterFaultIT.assertEachBatchOnce(bootstrap, live.prefix, session);
            ClusterFaultIT.assertOneEndRecord(bootstrap, live.prefix, session);
        } finally {
            ingest.close();
            decode.close();
            aggregate.close();
            broker.close();
        }
    }
}
