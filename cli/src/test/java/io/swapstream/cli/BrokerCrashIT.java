package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.ingest.generate.TraceReplay;
import io.swapstream.schemas.avro.ThreadStats;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker itself killed with SIGKILL mid-session and started again on the same data directory
 * ({@code swapstream broker}, a separate process, as are ingest, decode and aggregate): the stages
 * ride it out, and the final rows equal the offline statistics, each once.
 */
class BrokerCrashIT {
    @TempDir Path dir;

    /**
     * The broker logs when its transaction coordinator skips a prepared transaction's markers: a
     * restarted single node was seen to, for partitions whose leader it had not yet taken back.
     */
    static final List<String> MARKER_LOG =
            List.of("-Dorg.slf4j.simpleLogger.log.kafka.coordinator.transaction.TransactionMarkerChannelManager=info");

    @Test
    void theBrokerKilledAndRestartedMidSessionLosesAndDoublesNothing() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path data = dir.resolve("kafka");
        Path brokerLog = dir.resolve("broker.log");
        StageProcess broker = StageProcess.start(brokerLog, MARKER_LOG, "broker", "--data-dir", data.toString(), "--port",
                String.valueOf(port)).awaitLog("broker: running", Duration.ofSeconds(60));
        String bootstrap = "127.0.0.1:" + port;
        KafkaBroker.Bootstrap k = new KafkaBroker.Bootstrap(bootstrap, "swapstream broker process");
        LiveSessionIT live = new LiveSessionIT();
        live.dir = dir;
        Path whole = live.trace(400_000);
        Map<String, ThreadStats> expected = LiveSessionIT.offline(whole, "crash");
        Path watched = Files.createDirectories(dir.resolve("traces"));
        StageProcess decode = live.decode(k, dir.resolve("decode-state"));
        StageProcess aggregate = live.aggregate(k, dir.resolve("aggregate-state"));
        try (LiveSessionIT.Rows rows = live.new Rows(k); StageProcess ingest = live.ingest(k, watched)) {
            Thread writer = new Thread(() -> {
                try {
                    TraceReplay.replay(whole, watched.resolve("crash.etl"), 120, null);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            writer.start();
            LiveSessionIT.awaitFileSize(watched.resolve("crash.etl"), Files.size(whole) / 2);
            broker.kill9();
            Thread.sleep(3000); // the stages see it gone: requests time out, connections are refused
            broker = StageProcess.start(brokerLog, MARKER_LOG, "broker", "--data-dir", data.toString(), "--port", String.valueOf(port))
                    .awaitLog("broker: running", Duration.ofSeconds(60));
            writer.join();
            rows.await(expected, Duration.ofSeconds(180));
            LiveSessionIT.assertSameFinals(expected, rows);
            assertEquals(2, Files.readString(brokerLog).split("broker: running", -1).length - 1, "the broker ran twice");
            // whether this run's timing made the watcher abort a transaction (it rides it out either way)
            List<String> ingestLog = Files.readAllLines(dir.resolve("ingest.log"));
            long aborted = ingestLog.stream().filter(l -> l.contains("transaction is aborted")).count();
            long fenced = ingestLog.stream().filter(l -> l.contains("a new producer takes over")).count();
            long replaced = 0;
            List<String> hanging = new java.util.ArrayList<>();
            List<String> retaken = new java.util.ArrayList<>();
            for (String stage : new String[] {"decode.log", "aggregate.log"}) {
                List<String> log = Files.readAllLines(dir.resolve(stage));
                replaced += log.stream().filter(l -> l.contains("a new stream thread goes on")).count();
                log.stream().filter(l -> l.contains("a transaction that could never end")).forEach(hanging::add);
                log.stream().filter(l -> l.contains("not in the committed state") || l.contains("taken before")
                        || l.contains("final row(s)") || l.contains("aborted a transaction left open")).forEach(retaken::add);
            }
            System.out.printf("BrokerCrashIT: the watcher aborted %d transaction(s) and replaced its fenced producer %d time(s),"
                    + " the stages replaced %d stream thread(s), aborted %d hanging transaction(s) and took %d gap(s) of"
                    + " buffers, batches or end records from the input topics, skipped batches taken before, or sent final rows again or"
                    + " not, and went on%n", aborted, fenced, replaced, hanging.size(), retaken.size());
            long skipped = Files.readAllLines(brokerLog).stream().filter(l -> l.contains("likely deleted already")).count();
            System.out.printf("BrokerCrashIT: the restarted broker skipped the markers of %d prepared transaction(s) on partitions"
                    + " without a leader yet ('Couldn't find leader endpoint ... likely deleted already')%n", skipped);
            hanging.forEach(l -> System.out.println("BrokerCrashIT: " + l));
            retaken.forEach(l -> System.out.println("BrokerCrashIT: " + l));
        } finally {
            decode.close();
            aggregate.close();
            broker.close();
        }
    }
}
