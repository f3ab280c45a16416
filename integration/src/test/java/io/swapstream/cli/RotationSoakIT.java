package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.Rollups;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.generate.TraceReplay;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.local.RollupRun;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A logger that rotates its file 32 times, each file a session started anew, into a folder that
 * {@code ingest --watch --after-publish delete} follows, with the decode, aggregate and rollup stages on a
 * real broker. The folder never holds more than the current and the previous file; the watcher's heap after
 * its collections stays flat; and every session's rows, and every host window's roll-up, equal the offline
 * statistics of the files.
 */
@ExtendWith(KafkaBroker.class)
class RotationSoakIT {
    static final int ROTATIONS = 32;
    static final long WINDOW = 10_000_000_000L;
    static final Pattern HEAP = Pattern.compile("heap (\\d+) MiB after the last collection");
    @TempDir Path dir;

    @Test
    void rotatedFilesArePublishedDeletedAndEqualOffline(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "soak" + java.util.UUID.randomUUID().toString().substring(0, 6) + ".";
        int partitions = 2;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, partitions, (short) 1);
        }
        Path source = Files.createDirectories(dir.resolve("source"));
        Path watched = Files.createDirectories(dir.resolve("traces"));
        // the files a logger would write, one after the other, each its own session (a new StartTime)
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < ROTATIONS; i++) {
            GeneratorOptions o = GeneratorOptions.defaults().withShape(2, 3, 3).withSwitches(4_000).withSeed(100 + i)
                    .withBufferSize(8 * 1024).withStartTime(134_000_000_000_000_000L + i * 300_000_000L);
            Path f = source.resolve(String.format("kernel-%03d.etl", i));
            TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
            files.add(f);
        }
        Map<String, ThreadStats> expected = new HashMap<>();
        List<ThreadStats> windowRows = new ArrayList<>();
        for (Path f : files) {
            Map<String, ThreadStats> rows = LiveSessionIT.offline(f, "soak01", WINDOW);
            expected.putAll(rows);
            rows.forEach((k, v) -> {
                if (k.split("/").length == 3) windowRows.add(v);
            });
        }
        Map<String, HostStats> expectedHosts = hostRows(windowRows);

        Path log = dir.resolve("ingest.log");
        try (Pipeline pipeline = Pipeline.start(kafka.servers(), "soak-" + prefix, dir.resolve("state"), prefix, partitions, (short) 1,
                     WINDOW, 1_000, Map.of());
             RollupRun rollup = RollupRun.start(kafka.servers(), "soak-" + prefix, dir.resolve("rollup"), prefix, partitions, (short) 1,
                     Map.of(), System.nanoTime() + Duration.ofSeconds(60).toNanos(), true);
             StageProcess ingest = StageProcess.start(log, "ingest", "--watch", watched.toString(), "-b", kafka.servers(),
                     "--topic-prefix", prefix, "--host", "soak01", "--after-publish", "delete", "--quiet", "5s", "--poll", "100ms")) {
            ingest.awaitLog("watching", Duration.ofSeconds(60));
            int most = 0;
            for (int i = 0; i < ROTATIONS; i++) {
                // the logger stops one file and starts the next: the previous one goes once its end is committed
                awaitAtMost(watched, 1, Duration.ofSeconds(60));
                TraceReplay.replay(files.get(i), watched.resolve(files.get(i).getFileName()), 50, null);
                most = Math.max(most, etlFiles(watched));
                Thread.sleep(1_000); // a logger rotates every few minutes; here every second or so, for progress lines to sample
                most = Math.max(most, etlFiles(watched));
            }
            awaitAtMost(watched, 0, Duration.ofSeconds(60)); // the last one ends after the quiet time
            assertTrue(most <= 2, "at most the current and the previous file: " + most);
            ingest.awaitLog("kernel-031.etl: session", Duration.ofSeconds(60));
            Map<String, ThreadStats> finals = readFinals(kafka.servers(), prefix, expected.size(), Duration.ofSeconds(120));
            assertEquals(expected.keySet(), finals.keySet());
            expected.forEach((k, v) -> assertEquals(v, finals.get(k), k));
            rollup.awaitTaken(windowRows.size(), System.nanoTime() + Duration.ofSeconds(60).toNanos());
            rollup.endOfInput();
            Map<String, HostStats> rolled = readHostRows(kafka.servers(), prefix, expectedHosts, Duration.ofSeconds(60));
            assertEquals(expectedHosts.keySet(), rolled.keySet());
            // merged in another order, a sketch holds the same counts in a layout of its own: compared without its bytes
            expectedHosts.forEach((k, v) -> assertEquals(withoutSketches(v), comparable(rolled.get(k)), k));
            // the watcher's heap after its collections: flat over the rotations
            Thread.sleep(ProgressLine.EVERY_SECONDS * 1000 + 500);
            List<Long> heap = new ArrayList<>();
            Matcher m = HEAP.matcher(Files.readString(log));
            while (m.find()) heap.add(Long.parseLong(m.group(1)));
            assertTrue(heap.size() >= 3, "progress lines with the heap: " + heap);
            long early = heap.subList(0, heap.size() / 3 + 1).stream().mapToLong(Long::longValue).max().orElseThrow();
            long late = heap.subList(heap.size() * 2 / 3, heap.size()).stream().mapToLong(Long::longValue).max().orElseThrow();
            System.out.printf("RotationSoakIT: %d rotations, at most %d files at once, watcher heap after collections %s MiB%n",
                    ROTATIONS, most, heap);
            assertTrue(late <= early + 8, "the watcher's heap grew: " + heap);
            String all = Files.readString(log);
            assertEquals(ROTATIONS, all.split("published and ended: deleted", -1).length - 1, all);
        }
    }

    static HostStats withoutSketches(HostStats h) {
        return HostStats.newBuilder(h).setWaitSketch(null).setReadySketch(null).setRunSketch(null).setReadyIdleWakeSketch(null).setReadyContendedSketch(null).build();
    }

    private static int etlFiles(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return (int) s.filter(p -> p.toString().endsWith(".etl")).count();
        }
    }

    private static void awaitAtMost(Path dir, int n, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (etlFiles(dir) > n) {
            if (System.nanoTime() > deadline) throw new AssertionError(dir + " still holds more than " + n + " files");
            Thread.sleep(20);
        }
    }

    /** The final rows on thread-stats, by key, once there are {@code count} of them. */
    static Map<String, ThreadStats> readFinals(String servers, String prefix, int count, Duration timeout) throws Exception {
        SingleObjectAvroSerde<ThreadStats> serde = new SingleObjectAvroSerde<>(ThreadStats.class);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, ThreadStats> out = new HashMap<>();
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(servers, prefix + SwapstreamConfig.THREAD_STATS)) {
                ThreadStats t = serde.deserialize("t", r.value());
                if (t.getFinal$()) out.put(r.key(), t);
            }
            if (out.size() >= count || System.nanoTime() > deadline) return out;
            Thread.sleep(500);
        }
    }

    /** The host roll-ups, the highest revision of each key, once there are {@code count} keys. */
    /** The offline roll-up of thread window rows per host, by host/windowStart. */
    static Map<String, HostStats> hostRows(List<ThreadStats> windowRows) {
        Rollups hosts = new Rollups(RollupGroup.Kind.HOST);
        hosts.addAll(windowRows);
        Map<String, HostStats> out = new TreeMap<>();
        for (HostStats h : hosts.hostRows()) out.put(h.getHost() + "/" + h.getWindowStartNanos(), h);
        return out;
    }

    /**
     * The host roll-up rows, the latest revision of each, read until they are {@code expected} (compared without their
     * sketches, as the callers assert) or the bound passes: a row that came late is merged and goes out again revised,
     * after the first revision of every key may already be there.
     */
    static Map<String, HostStats> readHostRows(String servers, String prefix, Map<String, HostStats> expected, Duration timeout) throws Exception {
        SingleObjectAvroSerde<HostStats> serde = new SingleObjectAvroSerde<>(HostStats.class);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, HostStats> out = new TreeMap<>();
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(servers, prefix + SwapstreamConfig.HOST_STATS)) {
                HostStats h = serde.deserialize("t", r.value());
                out.merge(r.key(), h, (a, b) -> b.getRevision() >= a.getRevision() ? b : a);
            }
            boolean all = out.keySet().equals(expected.keySet()) && expected.entrySet().stream().allMatch(e ->
                    withoutSketches(e.getValue()).equals(comparable(out.get(e.getKey()))));
            if (all || System.nanoTime() > deadline) return out;
            Thread.sleep(500);
        }
    }

    /** A rolled-up row as the tests compare it with one made offline: no sketch bytes, no revision. */
    static HostStats comparable(HostStats rolled) {
        return HostStats.newBuilder(withoutSketches(rolled)).setRevision(0).setAdded(null).build();
    }
}
