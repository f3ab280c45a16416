package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.IngestMetrics;
import io.swapstream.ingest.WatchedFolder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ingest --watch --http}'s /metrics: the backlog, each host's newest file's age and the collection script's
 * status, read from the folder at each scrape; and every {@code swapstream_ingest_*} series the shipped alert rules
 * (dashboards/swapstream-alerts.yml) use is one it serves.
 */
class IngestMetricsTest {
    @TempDir Path dir;

    private Path trace(String name, long startTime) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withSwitches(1_000).withBufferSize(8 * 1024)
                .withLoggerName("Swapstream").withStartTime(startTime);
        Path p = dir.resolve(name);
        TraceGenerator.generate(p, o, MaximumWaitReason.forBuild(o.build()));
        return p;
    }

    private static double value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        assertTrue(m.find(), series + " in\n" + text);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void theFolderAndTheCollectorsStatusAreScraped() throws Exception {
        Path a = trace("swapstream-20261128T020000Z.etl", 134_000_000_000_000_000L);
        Path b = trace("swapstream-20261128T021000Z.etl", 134_000_006_000_000_000L);
        Files.writeString(dir.resolve("notes.txt"), "not counted");
        long created = Math.max(Files.readAttributes(a, BasicFileAttributes.class).creationTime().toMillis(),
                Files.readAttributes(b, BasicFileAttributes.class).creationTime().toMillis());
        long now = created + 90_000;
        String text;
        try (IngestMetrics m = new IngestMetrics(dir, p -> "web01", "web01", () -> 12, () -> 1, () -> 3, () -> now)) {
            text = new String(m.scrape(null), StandardCharsets.UTF_8);
            assertFalse(text.contains("swapstream_ingest_collector_ok"), "no status file yet: no status series\n" + text);
            Files.writeString(dir.resolve(WatchedFolder.STATUS_FILE), "time=" + Instant.ofEpochMilli(now - 30_000) + "\nresult=error\n"
                    + "session=Swapstream\nevents_lost=7\nbuffers_lost=1\nmessage=backlog over its cap\n");
            String again = new String(m.scrape(null), StandardCharsets.UTF_8);
            assertEquals(0, value(again, "swapstream_ingest_collector_ok{host=\"web01\",stage=\"ingest\"}"));
            assertEquals(7, value(again, "swapstream_ingest_collector_events_lost{host=\"web01\",stage=\"ingest\"}"));
            assertEquals(1, value(again, "swapstream_ingest_collector_buffers_lost{host=\"web01\",stage=\"ingest\"}"));
            assertEquals(30, value(again, "swapstream_ingest_collector_status_age_seconds{host=\"web01\",stage=\"ingest\"}"));
        }
        assertEquals(2, value(text, "swapstream_ingest_backlog_files{stage=\"ingest\"}"));
        assertEquals(Files.size(a) + Files.size(b), value(text, "swapstream_ingest_backlog_bytes{stage=\"ingest\"}"));
        assertEquals(90, value(text, "swapstream_ingest_newest_file_age_seconds{host=\"web01\",stage=\"ingest\"}"));
        assertEquals(12, value(text, "swapstream_ingest_buffers_out_total{stage=\"ingest\"}"));
        assertEquals(1, value(text, "swapstream_ingest_sessions_open{stage=\"ingest\"}"));
        assertEquals(3, value(text, "swapstream_ingest_sessions_ended_total{stage=\"ingest\"}"));
        assertTrue(text.contains("jvm_memory_used_bytes"), "the JVM's memory, as the stages'");
    }

    @Test
    void httpGoesWithWatch() {
        CliRunner r = CliRunner.run("ingest", "--http", "127.0.0.1:0", dir.resolve("a.etl").toString());
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), r.err());
        assertTrue(r.err().contains("--http goes with --watch DIR"), r.err());
        CliRunner users = CliRunner.run("ingest", "--watch", dir.toString(), "--http-users", dir.resolve("users").toString(), "-b", "127.0.0.1:1");
        assertEquals(Swapstream.EXIT_BAD_INPUT, users.exit(), users.err());
        assertTrue(users.err().contains("--http-tls and --http-users go with --http"), users.err());
    }

    @Test
    void theShippedAlertsUseOnlySeriesTheIngesterServes() throws Exception {
        trace("db01.etl", 134_000_000_000_000_000L);
        Files.writeString(dir.resolve(WatchedFolder.STATUS_FILE), "time=2026-11-28T02:00:00Z\nresult=ok\nevents_lost=0\nbuffers_lost=0\n");
        String text;
        try (IngestMetrics m = new IngestMetrics(dir, p -> "db01", "db01", () -> 0, () -> 0, () -> 0, System::currentTimeMillis)) {
            text = new String(m.scrape(null), StandardCharsets.UTF_8);
        }
        Set<String> served = new TreeSet<>();
        Matcher s = Pattern.compile("(?m)^(swapstream_ingest_\\w+)[{ ]").matcher(text);
        while (s.find()) served.add(s.group(1));
        String rules = Files.readString(CliRunner.REPOSITORY.resolve("dashboards/swapstream-alerts.yml"));
        Set<String> used = new TreeSet<>();
        Matcher u = Pattern.compile("swapstream_ingest_\\w+").matcher(rules);
        while (u.find()) used.add(u.group());
        assertFalse(used.isEmpty(), "the host-side alerts are in dashboards/swapstream-alerts.yml");
        assertTrue(served.containsAll(used), "used " + used + ", served " + served);
        for (String alert : new String[] {"SwapstreamHostNoNewTraceFile", "SwapstreamHostEventsLost", "SwapstreamHostBacklogOverCap",
                "SwapstreamHostCollectorFailed"}) {
            assertTrue(rules.contains("alert: " + alert), alert);
        }
    }
}
