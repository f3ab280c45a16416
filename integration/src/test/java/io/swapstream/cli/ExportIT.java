package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.SessionPartitioner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code export}: a session published whole comes back byte for byte the file that was ingested (every shared
 * real file, generated traces of both encodings); a live one, followed by an ingester killed with SIGKILL
 * mid-file, as far as published; and each bad request is one line with exit status 2.
 */
@ExtendWith(KafkaBroker.class)
class ExportIT {
    @TempDir Path dir;
    final String prefix = "export" + UUID.randomUUID().toString().substring(0, 6) + ".";
    static final int PARTITIONS = 3;

    String[] kafka(KafkaBroker.Bootstrap k, String... more) {
        List<String> a = new ArrayList<>(List.of(more));
        a.addAll(List.of("-b", k.servers(), "--topic-prefix", prefix, "--partitions", Integer.toString(PARTITIONS)));
        return a.toArray(String[]::new);
    }

    static Path generated(Path at, String mode, long minute) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode(mode).withSwitches(15_000).withBufferSize(8 * 1024).withSeed(minute)
                .withStartTime(134_000_000_000_000_000L + minute * 600_000_000L);
        TraceGenerator.generate(at, o, MaximumWaitReason.forBuild(o.build()));
        return at;
    }

    /** Ingests {@code f} whole as {@code host}, exports its session and checks the export is the file, byte for byte. */
    void roundTrip(KafkaBroker.Bootstrap k, Path f, String host) throws Exception {
        CliRunner in = CliRunner.run(kafka(k, "ingest", "--host", host, f.toString()));
        assertEquals(0, in.exit(), f + ": " + in.err());
        String session = BufferPublisher.sessionOf(f, host);
        Path out = dir.resolve(host + ".etl");
        CliRunner ex = CliRunner.run(kafka(k, "export", "--session", session, "-o", out.toString()));
        assertEquals(0, ex.exit(), f + ": " + ex.err());
        assertEquals(-1, Files.mismatch(f, out), f + ": the export differs from the file ingested (" + ex.out() + ")");
    }

    @Test
    void generatedTracesOfBothEncodingsExportByteForByte(KafkaBroker.Bootstrap k) throws Exception {
        roundTrip(k, generated(dir.resolve("cswitch.etl"), "cswitch", 1), "gen-cswitch");
        roundTrip(k, generated(dir.resolve("compact.etl"), "compact", 2), "gen-compact");
        // the same file ingested again: its buffers are on the topic twice, the export holds them once
        Path again = generated(dir.resolve("again.etl"), "compact", 3);
        assertEquals(0, CliRunner.run(kafka(k, "ingest", "--host", "gen-again", again.toString())).exit());
        roundTrip(k, again, "gen-again");
    }

    @Test
    void everySharedRealFileExportsByteForByte(KafkaBroker.Bootstrap k) throws Exception {
        Path testdata = InspectRealFilesTest.testdata();
        List<Path> files;
        try (Stream<Path> s = Files.list(testdata)) {
            files = s.filter(p -> p.toString().endsWith(".etl")).sorted().toList();
        }
        assertFalse(files.isEmpty());
        int i = 0;
        for (Path f : files) roundTrip(k, f, "real" + i++);
    }

    @Test
    void badRequestsAreOneLineWithExitTwo(KafkaBroker.Bootstrap k) throws Exception {
        Path f = generated(dir.resolve("bad.etl"), "compact", 4);
        assertEquals(0, CliRunner.run(kafka(k, "ingest", "--host", "bad", f.toString())).exit());
        String session = BufferPublisher.sessionOf(f, "bad");

        String unknown = "bad:Swapstream:" + (134_000_000_000_000_000L + 7);
        CliRunner r = CliRunner.run(kafka(k, "export", "--session", unknown, "-o", dir.resolve("u.etl").toString()));
        assertOneLine(r, "no record of it");
        assertFalse(Files.exists(dir.resolve("u.etl")));

        r = CliRunner.run(kafka(k, "export", "--session", "not-a-session", "-o", dir.resolve("n.etl").toString()));
        assertOneLine(r, "is not a session id");

        Path locked = Files.createDirectories(dir.resolve("locked"));
        assertTrue(locked.toFile().setWritable(false));
        try {
            if (!Files.isWritable(locked)) { // root writes anywhere: then there is nothing to refuse
                r = CliRunner.run(kafka(k, "export", "--session", session, "-o", locked.resolve("x.etl").toString()));
                assertOneLine(r, "permission denied");
            }
        } finally {
            locked.toFile().setWritable(true);
        }
        r = CliRunner.run(kafka(k, "export", "--session", session, "-o", dir.resolve("missing/x.etl").toString()));
        assertOneLine(r, "does not exist");

        // retention took the session's first records: what the topic still holds is said
        String topic = prefix + "raw-buffers";
        TopicPartition tp = new TopicPartition(topic, SessionPartitioner.partition(session, PARTITIONS));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", k.servers()))) {
            long firstOfSession = firstOffsetOf(k, tp, session);
            admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(firstOfSession + 2))).all().get();
        }
        r = CliRunner.run(kafka(k, "export", "--session", session, "-o", dir.resolve("gone.etl").toString()));
        assertOneLine(r, "no longer holds it whole: it holds buffers 2 to ");
        assertFalse(Files.exists(dir.resolve("gone.etl")));
        try (Stream<Path> s = Files.list(dir)) {
            assertEquals(List.of(), s.filter(p -> p.toString().endsWith(".part")).toList(), "no partial file is left");
        }
    }

    static void assertOneLine(CliRunner r, String expected) {
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), r.err());
        assertTrue(r.err().contains(expected), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    static long firstOffsetOf(KafkaBroker.Bootstrap k, TopicPartition tp, String session) {
        try (var c = new org.apache.kafka.clients.consumer.KafkaConsumer<String, byte[]>(Map.of("bootstrap.servers", k.servers(),
                "isolation.level", "read_committed"), new org.apache.kafka.common.serialization.StringDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            while (c.position(tp) < end) {
                for (var r : c.poll(Duration.ofMillis(500))) if (session.equals(r.key())) return r.offset();
            }
        }
        throw new AssertionError("no record of " + session + " in " + tp);
    }

    /** Exports {@code session} until the topic holds a committed buffer of it; a bound for a broken ingester, not a timing. */
    void awaitExport(KafkaBroker.Bootstrap k, String session, Path out) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (true) {
            CliRunner r = CliRunner.run(kafka(k, "export", "--session", session, "-o", out.toString()));
            if (r.exit() == 0) return;
            if (System.nanoTime() > deadline) throw new AssertionError("no committed buffer of " + session + ": " + r.err());
            Thread.sleep(200);
        }
    }

    /**
     * A growing file followed by {@code ingest --watch}, the ingester killed with SIGKILL mid-file and started again:
     * exported while the logger writes, the file as far as published (a prefix of it, whole buffers); once all is
     * published, the file.
     */
    @Test
    void aLiveSessionExportsAsFarAsPublishedAndWholeAtTheEnd(KafkaBroker.Bootstrap k) throws Exception {
        Path whole = generated(dir.resolve("whole.etl"), "compact", 5);
        Path watched = Files.createDirectories(dir.resolve("traces"));
        Path file = watched.resolve("live.etl");
        Path log = dir.resolve("ingest.log");
        String session = BufferPublisher.sessionOf(whole, "live");
        StageProcess ingest = StageProcess.start(log, kafka(k, "ingest", "--watch", watched.toString(), "--host-from-file-name",
                "--quiet", LiveSessionIT.GATED_QUIET, "--poll", "200ms")).awaitLog("ingest: watching", Duration.ofSeconds(60));
        try (GatedReplay writer = GatedReplay.start(whole, file, 1000, 0.4, 0.7)) {
            writer.awaitAt(0);
            // killed once some of the file is committed, so that the ingester started again resumes it mid-file
            awaitExport(k, session, dir.resolve("first.etl"));
            ingest.kill9();
            writer.pass(0);
            ingest = StageProcess.start(log, kafka(k, "ingest", "--watch", watched.toString(), "--host-from-file-name",
                    "--quiet", LiveSessionIT.GATED_QUIET, "--poll", "200ms")).awaitLog("resuming session", Duration.ofSeconds(60));
            writer.awaitAt(1);
            Path mid = dir.resolve("mid.etl");
            CliRunner r = CliRunner.run(kafka(k, "export", "--session", session, "-o", mid.toString()));
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("as far as published"), r.out());
            byte[] got = Files.readAllBytes(mid);
            byte[] written = Files.readAllBytes(file);
            assertTrue(got.length > 0 && got.length <= written.length, got.length + " of " + written.length);
            assertArrayEquals(Arrays.copyOf(written, got.length), got, "the live export is the file as far as published");
            writer.pass(1);
            writer.join();
            // a second of quiet ends the file, now whole
            ingest.close();
            ingest = StageProcess.start(log, kafka(k, "ingest", "--watch", watched.toString(), "--host-from-file-name",
                    "--quiet", "1s", "--poll", "200ms"));
            ingest.awaitLog(file + ": no growth for", Duration.ofSeconds(120));
        } finally {
            ingest.close();
        }
        Path out = dir.resolve("live-export.etl");
        CliRunner r = CliRunner.run(kafka(k, "export", "--session", session, "-o", out.toString()));
        assertEquals(0, r.exit(), r.err());
        assertFalse(r.out().contains("as far as published"), r.out());
        assertEquals(-1, Files.mismatch(file, out), "the export of the ended session is the file: " + r.out());
    }

    /**
     * A range of a session: its export passes {@code inspect} cleanly, and {@code stats --window 60s} on it gives the
     * original's rows for every window wholly inside the range.
     */
    @Test
    void aRangeExportInspectsCleanlyAndKeepsTheStatisticsOfItsWindows(KafkaBroker.Bootstrap k) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("compact").withShape(4, 3, 3).withSwitches(400_000)
                .withBufferSize(8 * 1024).withSeed(6).withStartTime(134_000_000_000_000_000L);
        Path f = dir.resolve("range.etl");
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        assertEquals(0, CliRunner.run(kafka(k, "ingest", "--host", "rangehost", f.toString())).exit());
        long window = LiveSessionIT.WINDOW;
        // from the middle of the first window to the start of the last: the windows between lie wholly inside
        List<Long> windows = windowRows(f, Long.MIN_VALUE, Long.MAX_VALUE).stream().map(ExportIT::windowStart).distinct().sorted().toList();
        assertTrue(windows.size() >= 4, windows.toString());
        long from = windows.get(0) + window / 2;
        long to = windows.get(windows.size() - 1);
        Path out = Files.createDirectories(dir.resolve("range"));
        CliRunner r = CliRunner.run(kafka(k, "export", "--host", "rangehost", "--from", java.time.Instant.ofEpochSecond(0, from).toString(),
                "--to", java.time.Instant.ofEpochSecond(0, to).toString(), "-o", out.toString()));
        assertEquals(0, r.exit(), r.err());
        List<Path> written;
        try (Stream<Path> s = Files.list(out)) {
            written = s.toList();
        }
        assertEquals(1, written.size(), written.toString());
        Path part = written.get(0);
        assertTrue(Files.size(part) < Files.size(f), "the range is part of the file");

        CliRunner inspect = CliRunner.run("inspect", part.toString());
        assertEquals(0, inspect.exit(), inspect.err() + inspect.out());
        assertEquals("", inspect.err());

        List<String> whole = windowRows(f, from, to);
        List<String> range = windowRows(part, from, to);
        assertFalse(whole.isEmpty());
        assertEquals(List.of(), differences(whole, range), "rows of the whole windows in the range differ");
        System.out.printf("ExportIT: range of %d bytes of %d, %d rows in its whole windows%n", Files.size(part), Files.size(f), whole.size());

        // from a window's start: that first window's waits and ready times began before the range, on threads last
        // switched or readied in buffers the range would otherwise leave out
        long boundary = windows.get(1);
        Path fromStart = Files.createDirectories(dir.resolve("range-boundary"));
        r = CliRunner.run(kafka(k, "export", "--host", "rangehost", "--from", java.time.Instant.ofEpochSecond(0, boundary).toString(),
                "--to", java.time.Instant.ofEpochSecond(0, to).toString(), "-o", fromStart.toString()));
        assertEquals(0, r.exit(), r.err());
        Path boundaryPart;
        try (Stream<Path> s = Files.list(fromStart)) {
            boundaryPart = s.findFirst().orElseThrow();
        }
        List<String> wholeFromStart = windowRows(f, boundary, to);
        List<String> rangeFromStart = windowRows(boundaryPart, boundary, to);
        List<String> diff = differences(wholeFromStart, rangeFromStart);
        System.out.printf("ExportIT: range from a window's start, %d bytes: %d of %d rows differ%n", Files.size(boundaryPart), diff.size(),
                wholeFromStart.size());
        assertEquals(List.of(), diff, "rows of the range's windows, the first included, differ");
    }

    /** What differs between two row lists: a key missing from either, or the fields of a key that differ. */
    static List<String> differences(List<String> expected, List<String> got) throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        Map<String, com.fasterxml.jackson.databind.JsonNode> a = new java.util.TreeMap<>();
        Map<String, com.fasterxml.jackson.databind.JsonNode> b = new java.util.TreeMap<>();
        for (String l : expected) { var n = json.readTree(l); a.put(n.get("threadId") + "/" + n.get("windowStartNanos"), n); }
        for (String l : got) { var n = json.readTree(l); b.put(n.get("threadId") + "/" + n.get("windowStartNanos"), n); }
        List<String> out = new ArrayList<>();
        for (String key : a.keySet()) {
            if (!b.containsKey(key)) { out.add(key + " missing"); continue; }
            List<String> fields = new ArrayList<>();
            a.get(key).fieldNames().forEachRemaining(f -> { if (!a.get(key).get(f).equals(b.get(key).get(f))) fields.add(f + "=" + a.get(key).get(f) + "/" + b.get(key).get(f)); });
            if (!fields.isEmpty()) out.add(key + " " + String.join(" ", fields).replaceAll("Sketch=\\S+", "Sketch"));
        }
        for (String key : b.keySet()) if (!a.containsKey(key)) out.add(key + " extra");
        return out;
    }

    static long windowStart(String row) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(row).get("windowStartNanos").asLong();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The rows of {@code stats --window 60s} whose window lies within [from, to), sorted. */
    static List<String> windowRows(Path f, long from, long to) throws Exception {
        CliRunner r = CliRunner.run("stats", "--window", "60s", "--host", "rangehost", f.toString());
        assertTrue(r.exit() == 0 || r.exit() == Swapstream.EXIT_NO_SWITCHES, r.err());
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> rows = new ArrayList<>();
        for (String line : r.out().split("\n")) {
            if (line.isBlank()) continue;
            var row = json.readTree(line);
            var s = row.get("windowStartNanos");
            var e = row.get("windowEndNanos");
            if (s == null || s.isNull() || s.asLong() < from || e.asLong() > to) continue;
            rows.add(line);
        }
        rows.sort(null);
        return rows;
    }

    /**
     * {@code GET /api/sessions/{id}/etl}: the file, streamed; with from and to, the range; an unknown session a 404 and
     * a bad time a 400, in the one error shape.
     */
    @Test
    void theApiStreamsASessionAndItsRange(KafkaBroker.Bootstrap k) throws Exception {
        Path f = generated(dir.resolve("api.etl"), "cswitch", 8);
        assertEquals(0, CliRunner.run(kafka(k, "ingest", "--host", "apihost", f.toString())).exit());
        String session = BufferPublisher.sessionOf(f, "apihost");
        try (io.swapstream.http.StageHttp server = io.swapstream.http.StageHttp.bind("127.0.0.1:0")) {
            server.route(io.swapstream.http.EtlApi.PREFIX, new io.swapstream.http.EtlApi(k.servers(), prefix, Map.of())::answer);
            server.start();
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.port() + io.swapstream.http.EtlApi.PREFIX;
            java.util.function.Function<String, java.net.http.HttpResponse<byte[]>> get = url -> {
                try {
                    return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofByteArray());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            };
            String id = java.net.URLEncoder.encode(session, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
            var whole = get.apply(base + id + "/etl");
            assertEquals(200, whole.statusCode());
            assertArrayEquals(Files.readAllBytes(f), whole.body());

            long start = LiveSessionIT.TraceStart.of(f);
            String from = java.time.Instant.ofEpochSecond(0, start + 1_000_000_000L).toString();
            String to = java.time.Instant.ofEpochSecond(0, start + 2_000_000_000L).toString();
            var range = get.apply(base + id + "/etl?from=" + from + "&to=" + to);
            assertEquals(200, range.statusCode(), new String(range.body()));
            assertTrue(range.body().length > 0 && range.body().length < whole.body().length, range.body().length + " bytes");
            Path part = Files.write(dir.resolve("api-range.etl"), range.body());
            CliRunner inspect = CliRunner.run("inspect", part.toString());
            assertEquals(0, inspect.exit(), inspect.err());

            var unknown = get.apply(base + "apihost%3AX%3A12345/etl");
            assertEquals(404, unknown.statusCode());
            assertTrue(new String(unknown.body()).startsWith("{\"error\":"), new String(unknown.body()));
            var bad = get.apply(base + id + "/etl?from=yesterday&to=" + to);
            assertEquals(400, bad.statusCode());
            assertTrue(new String(bad.body()).startsWith("{\"error\":"), new String(bad.body()));
        }
    }

    /**
     * {@code archive}: killed with SIGKILL mid-write and started again, every ended session is one file, identical to
     * the one ingested, and no partial file is left.
     */
    @Test
    void theArchiveWritesEachEndedSessionOnceThroughAKill(KafkaBroker.Bootstrap k) throws Exception {
        List<Path> traces = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Path f = generated(dir.resolve("arch" + i + ".etl"), i == 1 ? "cswitch" : "compact", 20 + i);
            assertEquals(0, CliRunner.run(kafka(k, "ingest", "--host", "arch" + i, f.toString())).exit());
            traces.add(f);
        }
        Path archive = dir.resolve("archive");
        Path log = dir.resolve("archive.log");
        String group = "archive-" + prefix;
        // a killed member's partitions go to the next after its session times out: the broker's least, not 45 s
        String fast = Files.writeString(dir.resolve("archive.properties"), "session.timeout.ms=6000\nheartbeat.interval.ms=1500\n").toString();
        try (StageProcess first = StageProcess.start(log, List.of("-D" + ArchiveCommand.STALL_PROPERTY + "=true"),
                kafka(k, "archive", "--to", archive.toString(), "--group-id", group, "--client-config", fast))) {
            first.awaitLog("stopped mid-write", Duration.ofSeconds(120));
            first.kill9(); // it stands after the first buffer of a session: mid-write
        }
        List<Path> parts;
        try (Stream<Path> s = Files.walk(archive)) {
            parts = s.filter(p -> p.toString().endsWith(".part")).toList();
        }
        assertEquals(1, parts.size(), "the kill left the file it was writing: " + parts);
        try (StageProcess again = StageProcess.start(log, kafka(k, "archive", "--to", archive.toString(), "--group-id", group,
                "--client-config", fast))) {
            for (Path f : traces) {
                String session = BufferPublisher.sessionOf(f, f.getFileName().toString().replace(".etl", ""));
                again.awaitLog("archived " + session, Duration.ofSeconds(120));
            }
        }
        for (Path f : traces) {
            String host = f.getFileName().toString().replace(".etl", "");
            String session = BufferPublisher.sessionOf(f, host);
            Path archived = archive.resolve(host).resolve(session.substring(session.lastIndexOf(':') + 1) + ".etl");
            assertEquals(-1, Files.mismatch(f, archived), archived.toString());
        }
        try (Stream<Path> s = Files.walk(archive)) {
            List<Path> files = s.filter(Files::isRegularFile).toList();
            assertEquals(traces.size(), files.size(), "one file a session, no partial one: " + files);
        }
        assertTrue(Files.readString(log).contains("left by an earlier run; written again"), Files.readString(log));
    }
}
