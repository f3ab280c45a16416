package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.Directories;
import io.swapstream.local.OfflineRows;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A trace written into a watched folder buffer by buffer, as a logger writes it, followed by
 * {@code ingest --watch}, {@code decode} and {@code aggregate} as separate processes on a real broker,
 * some of them killed with SIGKILL mid-session and started again. The final rows, whole-session and
 * per 60 s window, must equal the offline statistics of the finished file, each window final once.
 */
@ExtendWith(KafkaBroker.class)
class LiveSessionIT {
    @TempDir Path dir;
    final String prefix = "live" + UUID.randomUUID().toString().substring(0, 6) + ".";
    static final long WINDOW = 60_000_000_000L;
    static final SingleObjectAvroSerde<ThreadStats> STATS = new SingleObjectAvroSerde<>(ThreadStats.class);
    static final SingleObjectAvroSerde<TraceSession> SESSIONS = new SingleObjectAvroSerde<>(TraceSession.class);

    /** Further client properties for every process, for a test that needs them. */
    final List<String> moreClientConfig = new ArrayList<>();

    /** Shorter timeouts than a service would use, so a killed member leaves the group and its transaction aborts quickly. */
    Path clientConfig() throws Exception {
        List<String> lines = new ArrayList<>(List.of("session.timeout.ms=6000", "heartbeat.interval.ms=1500",
                "transaction.timeout.ms=10000", "commit.interval.ms=300"));
        lines.addAll(moreClientConfig);
        lines.add("");
        return Files.writeString(dir.resolve("client.properties"), String.join("\n", lines));
    }

    String[] kafka(KafkaBroker.Bootstrap k, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of(more));
        a.addAll(List.of("-b", k.servers(), "--topic-prefix", prefix, "--partitions", "2", "--client-config", clientConfig().toString()));
        return a.toArray(String[]::new);
    }

    StageProcess decode(KafkaBroker.Bootstrap k, Path state) throws Exception {
        return StageProcess.start(dir.resolve("decode.log"), kafka(k, "decode", "--http", "127.0.0.1:0", "--state-dir", state.toString(),
                "--application-id", "live-" + prefix)).awaitLog("decode: running", Duration.ofSeconds(60));
    }

    StageProcess aggregate(KafkaBroker.Bootstrap k, Path state) throws Exception {
        return StageProcess.start(dir.resolve("aggregate.log"), kafka(k, "aggregate", "--http", "127.0.0.1:0", "--state-dir", state.toString(),
                "--application-id", "live-" + prefix, "--window", "60s", "--emit-interval", "1s"))
                .awaitLog("aggregate: running", Duration.ofSeconds(60));
    }

    StageProcess ingest(KafkaBroker.Bootstrap k, Path watched) throws Exception {
        return ingest(k, watched, "10s");
    }

    /**
     * The ingester of a test whose writers stop at gates ({@link GatedReplay}): a writer stopped there must
     * not look finished, so a file is quiet only after this long; {@link #finish} ends the files once whole.
     */
    static final String GATED_QUIET = "10m";

    StageProcess ingest(KafkaBroker.Bootstrap k, Path watched, String quiet) throws Exception {
        return StageProcess.start(dir.resolve("ingest.log"), kafka(k, "ingest", "--watch", watched.toString(), "--host-from-file-name", "--quiet", quiet,
                "--poll", "200ms")).awaitLog("ingest: watching", Duration.ofSeconds(60));
    }

    /**
     * Ends the sessions of {@code files}, whole now, without waiting for a gated ingester's quiet time: the
     * ingester is stopped and started again with a quiet time of a second, and resumes each to its end.
     */
    StageProcess finish(KafkaBroker.Bootstrap k, Path watched, StageProcess ingest, Path... files) throws Exception {
        ingest.close();
        StageProcess again = ingest(k, watched, "1s");
        for (Path f : files) again.awaitLog(f + ": no growth for", Duration.ofSeconds(120));
        return again;
    }

    /** A trace of about 22 minutes on 4 processors, with process and thread events, in 8 KiB buffers. */
    Path trace(long switches) throws Exception {
        Path f = dir.resolve("whole.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withShape(4, 2, 2).withSwitches(switches).withBufferSize(8 * 1024).withSeed(17);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        return f;
    }

    /** The final rows of the offline statistics, by output key. */
    static Map<String, ThreadStats> offline(Path f, String host) throws Exception {
        return offline(f, host, WINDOW);
    }

    static Map<String, ThreadStats> offline(Path f, String host, long window) throws Exception {
        return OfflineRows.of(f, host, window);
    }

    /** Reads thread-stats as they come: final rows by key, how often each was emitted final, when it arrived. */
    final class Rows implements AutoCloseable {
        final Map<String, ThreadStats> finals = new ConcurrentHashMap<>();
        final Map<String, Integer> finalCount = new ConcurrentHashMap<>();
        final Map<Long, Long> windowFinalAtNanos = new ConcurrentHashMap<>();
        final AtomicInteger nonFinalWindows = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread reader;

        Rows(KafkaBroker.Bootstrap k) {
            this(k, prefix);
        }

        Rows(KafkaBroker.Bootstrap k, String topicPrefix) {
            Map<String, Object> c = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, k.servers(),
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.GROUP_ID_CONFIG, "rows-" + UUID.randomUUID(),
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            reader = new Thread(() -> {
                try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(List.of(topicPrefix + SwapstreamConfig.THREAD_STATS));
                    while (!stop.get()) {
                        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                            ThreadStats t = STATS.deserialize("t", r.value());
                            boolean window = r.key().split("/").length == 3;
                            if (!t.getFinal$()) {
                                if (window) nonFinalWindows.incrementAndGet();
                                continue;
                            }
                            finals.put(r.key(), t);
                            finalCount.merge(r.key(), 1, Integer::sum);
                            if (window) windowFinalAtNanos.putIfAbsent(t.getWindowStartNanos(), System.nanoTime());
                        }
                    }
                }
            });
            reader.start();
        }

        void await(Map<String, ThreadStats> expected, Duration timeout) throws Exception {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!finals.keySet().containsAll(expected.keySet())) {
                if (System.nanoTime() > deadline) {
                    List<String> missing = expected.keySet().stream().filter(k -> !finals.containsKey(k)).limit(5).toList();
                    throw new AssertionError("final rows missing after " + timeout + ", e.g. " + missing + "\n" + logs());
                }
                Thread.sleep(200);
            }
            Thread.sleep(1500); // a second final of any row would have come by now
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            reader.join();
        }
    }

    String logs() throws Exception {
        StringBuilder b = new StringBuilder();
        for (String n : List.of("ingest.log", "decode.log", "aggregate.log")) {
            Path p = dir.resolve(n);
            if (Files.exists(p)) {
                String s = Files.readString(p);
                b.append("--- ").append(n).append('\n').append(s.length() > 4000 ? s.substring(s.length() - 4000) : s);
            }
        }
        return b.toString();
    }

    static void assertSameFinals(Map<String, ThreadStats> expected, Rows rows) {
        assertEquals(expected.keySet(), rows.finals.keySet());
        for (Map.Entry<String, ThreadStats> e : expected.entrySet()) assertEquals(e.getValue(), rows.finals.get(e.getKey()), e.getKey());
        rows.finalCount.forEach((k, n) -> assertEquals(1, n, "emitted final more than once: " + k));
        assertEquals(0, rows.nonFinalWindows.get(), "a window is only ever emitted final");
    }

    /**
     * 22 minutes of trace written at 60 times real speed, the ingester killed with SIGKILL twice
     * mid-file and started again: nothing lost, nothing twice, and how long after its end (in trace
     * time at that speed) each window's final row arrived.
     */
    @Test
    void aGrowingTraceFollowedThroughSeparateProcessesWithTheIngesterKilledTwice(KafkaBroker.Bootstrap k) throws Exception {
        Path whole = trace(1_300_000);
        Path watched = Files.createDirectories(dir.resolve("traces"));
        Map<String, ThreadStats> expected = offline(whole, "live");
        double speed = 60;
        Map<Long, Long> windowEndWrittenAt = new ConcurrentHashMap<>();
        try (StageProcess decode = decode(k, dir.resolve("state"));
             StageProcess aggregate = aggregate(k, dir.resolve("state"));
             Rows rows = new Rows(k)) {
            StageProcess[] ingest = {ingest(k, watched, GATED_QUIET)};
            long buffers;
            try (var r = io.swapstream.etw.EtlReader.open(whole).framesOnly()) {
                long n = 0;
                while (r.next()) n++;
                buffers = n;
            }
            long startNanos = TraceStart.of(whole);
            Path file = watched.resolve("live.etl");
            // the writer stops at a third and two thirds until the ingester has been killed there: mid-file, however slow the machine
            try (GatedReplay writer = GatedReplay.start(whole, file, speed, (i, traceNanos) -> {
                long end = Math.floorDiv(startNanos + traceNanos, WINDOW) * WINDOW;
                windowEndWrittenAt.putIfAbsent(end - WINDOW, System.nanoTime());
            }, 0.33, 0.66)) {
                for (int g = 0; g < 2; g++) {
                    writer.awaitAt(g);
                    if (g == 0) {
                        // the open session shows on both stages' gauges, from whichever task holds it
                        RebalanceIT.awaitMetric(decode, "swapstream_sessions_open");
                        RebalanceIT.awaitMetric(aggregate, "swapstream_sessions_open");
                    }
                    ingest[0].kill9();
                    writer.pass(g); // the logger goes on while its ingester is down
                    ingest[0] = ingest(k, watched, GATED_QUIET).awaitLog("resuming session", Duration.ofSeconds(60));
                }
                writer.join();
            }
            String log = Files.readString(dir.resolve("ingest.log"));
            assertEquals(2, log.split("resuming session", -1).length - 1, log);
            ingest[0] = finish(k, watched, ingest[0], file);
            rows.await(expected, Duration.ofSeconds(120));
            ingest[0].close();
            assertSameFinals(expected, rows);
            // how long after a window's end, in trace time at the replay speed, its final row came
            List<Double> lags = new ArrayList<>();
            rows.windowFinalAtNanos.forEach((start, at) -> {
                Long written = windowEndWrittenAt.get(start);
                if (written != null) lags.add((at - written) / 1e9 * speed);
            });
            lags.sort(null);
            assertTrue(lags.size() >= 15, lags.toString());
            System.out.printf("LiveSessionIT: %d buffers, %d windows; final row after the window's end, trace seconds at %.0fx:"
                    + " median %.1f, max %.1f%n", buffers, lags.size(), speed, lags.get(lags.size() / 2), lags.get(lags.size() - 1));
        }
    }

    /**
     * The decode and aggregate stages each killed with SIGKILL twice mid-session, once with the state
     * directory kept and once deleted: the same final rows, each window final once.
     */
    @Test
    void decodeAndAggregateKilledMidSessionGiveTheSameRows(KafkaBroker.Bootstrap k) throws Exception {
        Path whole = trace(600_000);
        Map<String, ThreadStats> expected = offline(whole, "crash");
        Path watched = Files.createDirectories(dir.resolve("traces"));
        StageProcess[] decode = {decode(k, dir.resolve("decode-state"))};
        StageProcess[] aggregate = {aggregate(k, dir.resolve("aggregate-state"))};
        StageProcess[] ingest = {ingest(k, watched, GATED_QUIET)};
        Path file = watched.resolve("crash.etl");
        // at a fifth, two fifths, ... of the file (the writer waits there for the kill): which stage, and whether its state directory goes too
        try (Rows rows = new Rows(k); GatedReplay writer = GatedReplay.start(whole, file, 150, 0.2, 0.4, 0.6, 0.8)) {
            record Kill(String stage, boolean deleteState) {}
            List<Kill> kills = List.of(new Kill("decode", true), new Kill("aggregate", false), new Kill("decode", false),
                    new Kill("aggregate", true));
            for (int i = 0; i < kills.size(); i++) {
                writer.awaitAt(i);
                Kill kill = kills.get(i);
                boolean isDecode = kill.stage().equals("decode");
                Path state = dir.resolve(kill.stage() + "-state");
                (isDecode ? decode : aggregate)[0].kill9();
                writer.pass(i); // the host goes on writing while the stage is down
                if (kill.deleteState()) Directories.deleteTree(state);
                if (isDecode) decode[0] = decode(k, state);
                else aggregate[0] = aggregate(k, state);
            }
            writer.join();
            ingest[0] = finish(k, watched, ingest[0], file);
            rows.await(expected, Duration.ofSeconds(150));
            assertSameFinals(expected, rows);
        } finally {
            ingest[0].close();
            decode[0].close();
            aggregate[0].close();
        }
    }

    /** The trace's start as Unix nanoseconds (its logfile header's StartTime). */
    static final class TraceStart {
        static long of(Path f) throws Exception {
            try (var r = io.swapstream.etw.EtlReader.open(f)) {
                r.next();
                return io.swapstream.etw.SessionClock.fileTimeToUnixNanos(
                        io.swapstream.etw.LogfileHeader.find(r.decoder()).startTime());
            }
        }
    }

    static String sessionOf(Path f, String host) throws Exception {
        return BufferPublisher.sessionOf(f, host);
    }
}
