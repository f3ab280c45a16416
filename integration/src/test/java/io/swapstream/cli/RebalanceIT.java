package io.swapstream.cli;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two sessions on the two partitions of each topic, growing as they are written, through one decode
 * and one aggregate instance; mid-session a second instance of each joins, taking one of the two
 * tasks (and so one session) from the first, takes that session's buffers and switches, and leaves
 * while the session still grows, handing it back. The final rows
 * equal the offline statistics, each once, and every batch and end record is on its topic once.
 */
@ExtendWith(KafkaBroker.class)
class RebalanceIT {
    @TempDir Path dir;

    @Test
    void aSecondInstanceOfEachStageJoinsAndLeavesMidSession(KafkaBroker.Bootstrap k) throws Exception {
        LiveSessionIT live = new LiveSessionIT();
        live.dir = dir;
        // a joining instance takes an active task at once, not a warm-up replica until the next probing rebalance
        live.moreClientConfig.add("acceptable.recovery.lag=1000000000");
        Path whole = live.trace(200_000);
        // two hosts whose sessions fall on different partitions of the two: whichever task moves, a session moves
        String[] hosts = hostsOnBothPartitions(whole, "rebalance");
        Map<String, ThreadStats> expected = new HashMap<>();
        for (String host : hosts) expected.putAll(LiveSessionIT.offline(whole, host));
        Path watched = Files.createDirectories(dir.resolve("traces"));
        StageProcess decode = live.decode(k, dir.resolve("decode-1"));
        StageProcess aggregate = live.aggregate(k, dir.resolve("aggregate-1"));
        StageProcess decode2 = null;
        StageProcess aggregate2 = null;
        // the loggers stop at a quarter of their files until each second instance holds a partition, and at three
        // quarters until each took work and left: "mid-session" by construction, however slowly the machine runs
        StageProcess ingest = live.ingest(k, watched, LiveSessionIT.GATED_QUIET);
        try (LiveSessionIT.Rows rows = live.new Rows(k);
             GatedReplay a = GatedReplay.start(whole, watched.resolve(hosts[0] + ".etl"), 20, 0.25, 0.75);
             GatedReplay b = GatedReplay.start(whole, watched.resolve(hosts[1] + ".etl"), 20, 0.25, 0.75)) {
            a.awaitAt(0);
            b.awaitAt(0);
            decode2 = StageProcess.start(dir.resolve("decode-2.log"), live.kafka(k, "decode", "--http", "127.0.0.1:0", "--state-dir",
                    dir.resolve("decode-2").toString(), "--application-id", "live-" + live.prefix)).awaitLog("decode: running", Duration.ofSeconds(60));
            aggregate2 = StageProcess.start(dir.resolve("aggregate-2.log"), live.kafka(k, "aggregate", "--http", "127.0.0.1:0", "--state-dir",
                    dir.resolve("aggregate-2").toString(), "--application-id", "live-" + live.prefix, "--window", "60s", "--emit-interval",
                    "1s")).awaitLog("aggregate: running", Duration.ofSeconds(60));
            // one of the two partitions each, and so one of the two live sessions: each stage has one source topic
            awaitMetric(decode2, "swapstream_kafka_assigned_partitions");
            awaitMetric(aggregate2, "swapstream_kafka_assigned_partitions");
            a.pass(0);
            b.pass(0);
            // each second instance takes its session's next buffers and switches
            awaitMetric(decode2, "swapstream_buffers_in_total");
            awaitMetric(aggregate2, "swapstream_switches_in_total");
            a.awaitAt(1);
            b.awaitAt(1);
            decode2.close(); // a planned stop: it leaves the group, and its task moves back at once
            aggregate2.close();
            a.pass(1);
            b.pass(1);
            a.join();
            b.join();
            ingest = live.finish(k, watched, ingest, watched.resolve(hosts[0] + ".etl"), watched.resolve(hosts[1] + ".etl"));
            rows.await(expected, Duration.ofSeconds(180));
            LiveSessionIT.assertSameFinals(expected, rows);
            for (String host : hosts) {
                String session = BufferPublisher.sessionOf(whole, host);
                ClusterFaultIT.assertEachBatchOnce(k.servers(), live.prefix, session);
                ClusterFaultIT.assertOneEndRecord(k.servers(), live.prefix, session);
            }
        } finally {
            ingest.close();
            decode.close();
            aggregate.close();
            if (decode2 != null) decode2.close();
            if (aggregate2 != null) aggregate2.close();
        }
    }

    /** Two host names, {@code name-a} and {@code name-bN}, whose sessions of {@code trace} fall on the two different partitions of two. */
    static String[] hostsOnBothPartitions(Path trace, String name) throws Exception {
        String[] hosts = {name + "-a", null};
        String first = BufferPublisher.sessionOf(trace, hosts[0]);
        for (int i = 0; hosts[1] == null; i++) {
            String candidate = name + "-b" + i;
            if (SessionPartitioner.partition(BufferPublisher.sessionOf(trace, candidate), 2) != SessionPartitioner.partition(first, 2)) {
                hosts[1] = candidate;
            }
        }
        return hosts;
    }

    /** Waits until the stage's metric {@code name} is above 0. */
    static void awaitMetric(StageProcess stage, String name) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI uri = java.net.URI.create("http://" + stage.http() + "/metrics");
        java.util.regex.Pattern p = java.util.regex.Pattern.compile("(?m)^" + name + "\\{[^}]*} ([0-9.E]+)$");
        // a task moving to a new instance restores its state first: on 2 busy cores, a minute and more; a bound, not a timing
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        String body = "";
        while (System.nanoTime() < deadline) {
            body = http.send(java.net.http.HttpRequest.newBuilder(uri).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            java.util.regex.Matcher m = p.matcher(body);
            if (m.find() && Double.parseDouble(m.group(1)) > 0) return;
            Thread.sleep(200);
        }
        throw new AssertionError(name + " stayed 0 on " + uri + ":\n" + body);
    }
}
