package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.export.MinuteArchive;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code archive --hosts} and {@code --when}, the flight recorder, against a real broker: two hosts' traces on the raw
 * topic and host roll-up rows written for them (one-second windows, so that a small trace spans several). Only the
 * chosen minutes are kept, each the range export {@code export --host --from --to} writes, once across restarts.
 */
@ExtendWith(KafkaBroker.class)
class ArchiveMinutesIT {
    static final long SECOND = 1_000_000_000L;

    @TempDir Path dir;
    final String prefix = "minutes" + UUID.randomUUID().toString().substring(0, 6) + ".";

    String[] kafka(KafkaBroker.Bootstrap k, String... more) {
        List<String> a = new ArrayList<>(List.of(more));
        a.addAll(List.of("-b", k.servers(), "--topic-prefix", prefix, "--partitions", "2"));
        return a.toArray(String[]::new);
    }

    /** A host's trace of about four seconds, ingested whole; returns its first whole second, Unix ns. */
    long ingest(KafkaBroker.Bootstrap k, String host, long seed) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("compact").withSwitches(20_000).withBufferSize(8 * 1024).withSeed(seed);
        Path f = dir.resolve(host + ".etl");
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        CliRunner in = CliRunner.run(kafka(k, "ingest", "--host", host, f.toString()));
        assertEquals(0, in.exit(), in.err());
        return Math.floorDiv(LiveSessionIT.TraceStart.of(f), SECOND) * SECOND;
    }

    static HostStats row(String host, long windowStart, long readyP99Nanos) {
        return HostStats.newBuilder().setHost(host).setWindowStartNanos(windowStart).setWindowEndNanos(windowStart + SECOND)
                .setSessions(1).setProcesses(1).setThreads(1).setSwitchInCount(1).setRunSumNanos(0).setReadyCount(1)
                .setReadySumNanos(readyP99Nanos).setReadyP99Nanos(readyP99Nanos).setTopProcesses(Map.of()).setFinal$(true).setRevision(0)
                .setReadyIdleWakeCount(0).setReadyIdleWakeSumNanos(0).setReadyContendedCount(0).setReadyContendedSumNanos(0)
                .setReadyIdleWakeByCState(Map.of()).setReadyIdleWakeSumNanosByCState(Map.of()).build();
    }

    /** The rows the rollup stage would write, in its framing and under its key (host/windowStart); ingest made the topic. */
    void publish(KafkaBroker.Bootstrap k, List<HostStats> rows) throws Exception {
        String topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.HOST_STATS);
        var serializer = RecordSerdeFactory.from(Map.of()).serde(HostStats.class, Map.of()).serializer();
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of("bootstrap.servers", k.servers()), new StringSerializer(),
                new ByteArraySerializer())) {
            for (HostStats r : rows) p.send(new ProducerRecord<>(topic, r.getHost() + "/" + r.getWindowStartNanos(), serializer.serialize(topic, r))).get();
        }
    }

    static List<String> files(Path archive) throws Exception {
        if (!Files.isDirectory(archive)) return List.of();
        try (Stream<Path> s = Files.walk(archive)) {
            return s.filter(Files::isRegularFile).map(p -> archive.relativize(p).toString()).sorted().toList();
        }
    }

    static String name(String host, long from, String session) {
        return host + "/" + MinuteArchive.fileName(from, session);
    }

    static String iso(long nanos) {
        return Instant.ofEpochSecond(0, nanos).toString();
    }

    @Test
    void keepsTheChosenMinutesOnceEachAsARangeExport(KafkaBroker.Bootstrap k) throws Exception {
        long w = ingest(k, "web01", 31);
        long d = ingest(k, "db07", 32);
        assertEquals(w, d, "both traces begin in the same second");
        String web = BufferPublisher.sessionOf(dir.resolve("web01.etl"), "web01");
        String db = BufferPublisher.sessionOf(dir.resolve("db07.etl"), "db07");
        // web01's third second crosses 10 ms; db07's never does; a host with no trace crosses too, and has nothing to keep
        List<HostStats> rows = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            rows.add(row("web01", w + i * SECOND, i == 2 ? 25_000_000L : 2_000_000L));
            rows.add(row("db07", w + i * SECOND, 3_000_000L));
        }
        rows.add(row("nohost", w, 50_000_000L));
        publish(k, rows);

        // --when: the crossing second and the one before, of web01 alone; a .part a killed run left is written again
        Path archive = dir.resolve("archive");
        Path crossing = archive.resolve(name("web01", w + 2 * SECOND, web));
        Files.createDirectories(crossing.getParent());
        Files.writeString(crossing.resolveSibling(crossing.getFileName() + MinuteArchive.PART), "half a file");
        Path log = dir.resolve("archive.log");
        String[] when = kafka(k, "archive", "--to", archive.toString(), "--when", "readyP99 > 10ms", "--group-id", "when-" + prefix);
        try (StageProcess p = StageProcess.start(log, when)) {
            p.awaitLog("kept web01 from " + iso(w + 2 * SECOND), Duration.ofSeconds(120));
            p.awaitLog("nohost from " + iso(w), Duration.ofSeconds(120));
        }
        assertEquals(List.of(name("web01", w + SECOND, web), name("web01", w + 2 * SECOND, web)), files(archive));
        assertTrue(Files.readString(log).contains("left by an earlier run; written again"), Files.readString(log));

        // the kept second is what export --host writes for it, and inspects cleanly
        Path export = Files.createDirectories(dir.resolve("export"));
        CliRunner ex = CliRunner.run(kafka(k, "export", "--host", "web01", "--from", iso(w + 2 * SECOND), "--to", iso(w + 3 * SECOND),
                "-o", export.toString()));
        assertEquals(0, ex.exit(), ex.err());
        assertEquals(-1, Files.mismatch(export.resolve(io.swapstream.http.EtlApi.fileName(web)), crossing), "the kept second is the export");
        CliRunner inspect = CliRunner.run("inspect", crossing.toString());
        assertEquals(0, inspect.exit(), inspect.err() + inspect.out());
        assertEquals("", inspect.err());

        // a new group reads every row again: what is kept stays as it is, nothing is written twice
        List<Long> modified = new ArrayList<>();
        for (String f : files(archive)) modified.add(Files.getLastModifiedTime(archive.resolve(f)).toMillis());
        String[] again = kafka(k, "archive", "--to", archive.toString(), "--when", "readyP99 > 10ms", "--group-id", "again-" + prefix);
        try (StageProcess p = StageProcess.start(log, again)) {
            p.awaitLog("web01 from " + iso(w + 2 * SECOND) + " of " + web + ": kept before", Duration.ofSeconds(120));
            p.awaitLog("nohost from " + iso(w), Duration.ofSeconds(120));
        }
        List<Long> after = new ArrayList<>();
        for (String f : files(archive)) after.add(Files.getLastModifiedTime(archive.resolve(f)).toMillis());
        assertEquals(modified, after);
        assertEquals(2, files(archive).size());

        // --hosts: every second of db07, none of web01's
        Path hosts = dir.resolve("hosts");
        try (StageProcess p = StageProcess.start(log, kafka(k, "archive", "--to", hosts.toString(), "--hosts", "db07", "--group-id",
                "hosts-" + prefix))) {
            p.awaitLog("kept db07 from " + iso(w + 2 * SECOND), Duration.ofSeconds(120));
        }
        assertEquals(List.of(name("db07", w, db), name("db07", w + SECOND, db), name("db07", w + 2 * SECOND, db)), files(hosts));
        assertFalse(Files.readString(log).contains("kept web01 from " + iso(w) + " "), "web01's first second met nothing");
    }
}
