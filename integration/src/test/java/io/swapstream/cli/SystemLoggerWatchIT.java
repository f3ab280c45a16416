package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.ingest.WatchedFolder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What windows/swapstream-collect.ps1 leaves in the trace folder, followed by {@code ingest --watch --http}: the
 * files of the {@code Swapstream} system logger session, named by the UTC time, one every rotation, and the
 * script's status file. Each file is its own session under the logger's own name; the older ends when the
 * newer appears; the status file is not taken for a trace; and /metrics shows the backlog, the newest file's
 * age and the script's status.
 */
@ExtendWith(KafkaBroker.class)
class SystemLoggerWatchIT {
    @TempDir Path dir;

    private static Path rotation(Path at, int minute) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withSwitches(5_000).withSeed(minute).withBufferSize(8 * 1024)
                .withLoggerName("Swapstream").withStartTime(134_000_000_000_000_000L + minute * 600_000_000L);
        TraceGenerator.generate(at, o, MaximumWaitReason.forBuild(o.build()));
        return at;
    }

    @Test
    void theSwapstreamSessionsFilesAreFollowedAndTheFolderIsServed(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "syslog" + UUID.randomUUID().toString().substring(0, 6) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
        }
        Path watched = Files.createDirectories(dir.resolve("traces"));
        Path first = rotation(dir.resolve("a.etl"), 0), second = rotation(dir.resolve("b.etl"), 10);
        String firstSession = BufferPublisher.sessionOf(first, "web01"), secondSession = BufferPublisher.sessionOf(second, "web01");
        assertTrue(firstSession.startsWith("web01:Swapstream:"), firstSession);
        Files.copy(first, watched.resolve("swapstream-20261128T020000Z.etl"));
        Files.writeString(watched.resolve(WatchedFolder.STATUS_FILE), "time=2026-11-28T02:00:00Z\nresult=ok\nsession=Swapstream\n"
                + "events_lost=0\nbuffers_lost=0\nmessage=started swapstream-20261128T020000Z.etl\n");
        Path log = dir.resolve("ingest.log");
        try (StageProcess w = StageProcess.start(log, "ingest", "--watch", watched.toString(), "-b", kafka.servers(), "--topic-prefix", prefix,
                "--host", "web01", "--quiet", "60s", "--poll", "200ms", "--http", "127.0.0.1:0")) {
            w.awaitLog("following session " + firstSession, Duration.ofSeconds(60));
            // the next rotation: the older file ends as soon as the newer one of the same logger appears, not after --quiet
            Files.copy(second, watched.resolve("swapstream-20261128T021000Z.etl"));
            w.awaitLog("its logger started swapstream-20261128T021000Z.etl; session " + firstSession + " ended", Duration.ofSeconds(60));
            String address = w.logged("/health and /metrics on http://([0-9.:]+)");
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("swapstream_ingest_backlog_files{stage=\"ingest\"} 2.0"), metrics);
            assertTrue(metrics.contains("swapstream_ingest_newest_file_age_seconds{host=\"web01\",stage=\"ingest\"}"), metrics);
            assertTrue(metrics.contains("swapstream_ingest_collector_ok{host=\"web01\",stage=\"ingest\"} 1.0"), metrics);
            assertTrue(metrics.contains("swapstream_ingest_collector_events_lost{host=\"web01\",stage=\"ingest\"} 0.0"), metrics);
            String all = Files.readString(log);
            assertTrue(!all.contains(WatchedFolder.STATUS_FILE), "the status file is not taken for a trace:\n" + all);
        }
        ClusterFaultIT.assertEachBufferOnce(kafka.servers(), prefix, firstSession);
        assertTrue(secondSession.startsWith("web01:Swapstream:"));
    }
}
