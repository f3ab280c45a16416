package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.OfflineRows;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 58's trial on a real broker: the first megabyte of a generated file-mode trace dropped into the watched folder, as
 * a host that crashes leaves it, followed by {@code ingest --watch}, {@code decode}, {@code aggregate} and {@code rollup}
 * as separate processes. The rows computed past the earliest processor's last event say {@code complete: false} and are
 * in no roll-up; every other window row is the whole file's.
 */
@ExtendWith(KafkaBroker.class)
class TruncatedTraceIT {
    static final long WINDOW = 1_000_000_000L;
    static final SingleObjectAvroSerde<ThreadStats> STATS = new SingleObjectAvroSerde<>(ThreadStats.class);
    @TempDir Path dir;
    final String prefix = "trunc" + UUID.randomUUID().toString().substring(0, 6) + ".";

    String[] stage(KafkaBroker.Bootstrap k, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of(more));
        Path config = dir.resolve("client.properties");
        if (!Files.exists(config)) Files.writeString(config, "commit.interval.ms=300\n");
        a.addAll(List.of("-b", k.servers(), "--topic-prefix", prefix, "--partitions", "2", "--client-config", config.toString()));
        return a.toArray(String[]::new);
    }

    @Test
    void aTraceCutOffInTheWatchedFolderGivesMarkedRowsThatNoRollupTakes(KafkaBroker.Bootstrap k) throws Exception {
        Path whole = dir.resolve("whole.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(300_000);
        TraceGenerator.generate(whole, o, MaximumWaitReason.forBuild(o.build()));
        Path cut = Files.write(dir.resolve("trunc.etl"), Arrays.copyOf(Files.readAllBytes(whole), 1_000_000));
        String session = BufferPublisher.sessionOf(cut, "trunc");
        Map<String, ThreadStats> truth = OfflineRows.of(whole, "trunc", WINDOW);
        Path watched = Files.createDirectories(dir.resolve("traces"));
        String app = "trunc-" + prefix;
        try (StageProcess decode = StageProcess.start(dir.resolve("decode.log"), stage(k, "decode", "--http", "127.0.0.1:0", "--state-dir",
                     dir.resolve("decode-state").toString(), "--application-id", app)).awaitLog("decode: running", Duration.ofSeconds(90));
             StageProcess aggregate = StageProcess.start(dir.resolve("aggregate.log"), stage(k, "aggregate", "--http", "127.0.0.1:0", "--state-dir",
                     dir.resolve("aggregate-state").toString(), "--application-id", app, "--window", "1s", "--emit-interval", "1s"))
                     .awaitLog("aggregate: running", Duration.ofSeconds(90));
             StageProcess rollup = StageProcess.start(dir.resolve("rollup.log"), stage(k, "rollup", "--http", "127.0.0.1:0", "--state-dir",
                     dir.resolve("rollup-state").toString(), "--application-id", app, "--grace", "1s", "--max-wait", "1s"))
                     .awaitLog("rollup: running", Duration.ofSeconds(90));
             StageProcess ingest = StageProcess.start(dir.resolve("ingest.log"), stage(k, "ingest", "--watch", watched.toString(),
                     "--host-from-file-name", "--quiet", "2s", "--poll", "200ms")).awaitLog("ingest: watching", Duration.ofSeconds(90))) {
            Files.copy(cut, watched.resolve("trunc.etl"));
            // and the same trace cut at a buffer's end, as a logger that crashed may leave it: it frames whole
            Files.write(watched.resolve("atend.etl"), Arrays.copyOf(Files.readAllBytes(whole), 15 * 65_536));
            ingest.awaitLog("trunc.etl: no growth for", Duration.ofSeconds(120));
            // the session's whole-session rows go out final in one transaction when it ends
            Map<String, ThreadStats> rows = awaitWholeSessionRows(k, session, Duration.ofSeconds(180));
            List<ThreadStats> complete = new ArrayList<>();
            int marked = 0;
            int wrong = 0;
            for (Map.Entry<String, ThreadStats> e : rows.entrySet()) {
                ThreadStats t = e.getValue();
                if (e.getKey().split("/").length == 2) {
                    assertFalse(t.getComplete(), "a whole-session row of a session cut short: " + e.getKey());
                    continue;
                }
                if (t.getComplete()) {
                    assertEquals(unlabelled(truth.get(e.getKey())), unlabelled(t), e.getKey());
                    complete.add(t);
                } else {
                    marked++;
                    if (!unlabelled(t).equals(unlabelled(truth.get(e.getKey())))) wrong++;
                }
            }
            TreeSet<Long> completeWindows = new TreeSet<>();
            long switchesIn = 0;
            for (ThreadStats t : complete) {
                completeWindows.add(t.getWindowStartNanos());
                switchesIn += t.getSwitchInCount();
            }
            assertTrue(completeWindows.size() >= 2 && marked > 0 && wrong > 0,
                    completeWindows.size() + " complete windows, " + marked + " rows marked, " + wrong + " of them not the whole file's");
            for (Map.Entry<String, ThreadStats> e : rows.entrySet()) {
                // the time known ends after the last complete window and before the end of every marked one
                if (e.getKey().split("/").length == 3 && !e.getValue().getComplete()) {
                    assertTrue(e.getValue().getWindowStartNanos() > completeWindows.last(), e.getKey());
                }
            }
            // the host's roll-up rows: the complete windows alone, each with the complete rows' switches
            Map<Long, HostStats> hosts = awaitHostRows(k, completeWindows, Duration.ofSeconds(120));
            assertEquals(completeWindows, new TreeSet<>(hosts.keySet()), "roll-up windows of host trunc");
            assertEquals(switchesIn, hosts.values().stream().mapToLong(HostStats::getSwitchInCount).sum());
            // the fleet's metrics count the complete rows' switches alone
            assertEquals(switchesIn, awaitHostSwitches(rollup, switchesIn, Duration.ofSeconds(60)), "swapstream_host_switches of trunc");
            RebalanceIT.awaitMetric(aggregate, "swapstream_incomplete_stats_out_total");
            long markedReadyMax = rows.values().stream().filter(t -> !t.getComplete() && t.getReadyMaxNanos() != null)
                    .mapToLong(ThreadStats::getReadyMaxNanos).max().orElse(0);
            System.out.printf("TruncatedTraceIT: %d complete window rows in %d windows (the whole file's), %d marked (%d not the whole"
                    + " file's, ready max up to %.1f ms), %d host roll-up rows%n", complete.size(), completeWindows.size(), marked, wrong,
                    markedReadyMax / 1e6, hosts.size());
            TraceSession end = null;
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(k.servers(), prefix + SwapstreamConfig.SESSIONS)) {
                if (session.equals(r.key())) end = new SingleObjectAvroSerde<>(TraceSession.class).deserialize("s", r.value());
            }
            assertTrue(end != null && !end.getComplete() && end.getEndReason() != null, String.valueOf(end));

            String atEnd = BufferPublisher.sessionOf(watched.resolve("atend.etl"), "atend");
            Map<String, ThreadStats> atEndTruth = OfflineRows.of(whole, "atend", WINDOW);
            int atEndMarked = 0;
            for (Map.Entry<String, ThreadStats> e : awaitWholeSessionRows(k, atEnd, Duration.ofSeconds(120)).entrySet()) {
                if (e.getKey().split("/").length == 2) assertFalse(e.getValue().getComplete(), "cut at a buffer's end: " + e.getKey());
                else if (e.getValue().getComplete()) assertEquals(unlabelled(atEndTruth.get(e.getKey())), unlabelled(e.getValue()), e.getKey());
                else atEndMarked++;
            }
            assertTrue(atEndMarked > 0, "rows marked past the time known");
            TraceSession atEndRecord = null;
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(k.servers(), prefix + SwapstreamConfig.SESSIONS)) {
                if (atEnd.equals(r.key())) atEndRecord = new SingleObjectAvroSerde<>(TraceSession.class).deserialize("s", r.value());
            }
            assertTrue(atEndRecord != null && !atEndRecord.getComplete() && atEndRecord.getDeadLetters() == 0
                    && atEndRecord.getLossReasons().toString().contains("its logfile header says " + Files.size(whole) / 65_536 + " buffers were written; the file holds 15"),
                    String.valueOf(atEndRecord));
        }
    }

    /** The row without its thread's names: a thread named only at the trace's end is not named in its first megabyte. */
    static ThreadStats unlabelled(ThreadStats t) {
        assertTrue(t != null, "the whole file has the row");
        return ThreadStats.newBuilder(t).setProcessId(null).setProcessName(null).setThreadName(null).setComplete(true).build();
    }

    /** The session's final rows by key, once its whole-session rows are on the topic. */
    private Map<String, ThreadStats> awaitWholeSessionRows(KafkaBroker.Bootstrap k, String session, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, ThreadStats> finals = new HashMap<>();
            boolean ended = false;
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(k.servers(), prefix + SwapstreamConfig.THREAD_STATS)) {
                ThreadStats t = STATS.deserialize("t", r.value());
                if (!t.getFinal$() || !r.key().startsWith(session + "/")) continue;
                finals.put(r.key(), t);
                if (r.key().split("/").length == 2) ended = true;
            }
            if (ended) return finals;
            if (System.nanoTime() > deadline) throw new AssertionError("no whole-session row of " + session + " after " + timeout + "\n" + logs());
            Thread.sleep(500);
        }
    }

    /** The host's roll-up rows, the highest revision of each window, once every window of {@code windows} has one. */
    private Map<Long, HostStats> awaitHostRows(KafkaBroker.Bootstrap k, TreeSet<Long> windows, Duration timeout) throws Exception {
        SingleObjectAvroSerde<HostStats> serde = new SingleObjectAvroSerde<>(HostStats.class);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<Long, HostStats> latest = new TreeMap<>();
            for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(k.servers(), prefix + SwapstreamConfig.HOST_STATS)) {
                HostStats h = serde.deserialize("h", r.value());
                if (!"trunc".equals(String.valueOf(h.getHost()))) continue;
                latest.merge(h.getWindowStartNanos(), h, (a, b) -> b.getRevision() >= a.getRevision() ? b : a);
            }
            if (latest.keySet().containsAll(windows)) {
                Thread.sleep(3000); // a roll-up of a marked window, were there one, would have come by now
                latest.clear();
                for (ConsumerRecord<String, byte[]> r : ClusterFaultIT.readAll(k.servers(), prefix + SwapstreamConfig.HOST_STATS)) {
                    HostStats h = serde.deserialize("h", r.value());
                    if ("trunc".equals(String.valueOf(h.getHost()))) {
                        latest.merge(h.getWindowStartNanos(), h, (a, b) -> b.getRevision() >= a.getRevision() ? b : a);
                    }
                }
                return latest;
            }
            if (System.nanoTime() > deadline) throw new AssertionError("host rows of " + latest.keySet() + ", not all of " + windows + "\n" + logs());
            Thread.sleep(500);
        }
    }

    /**
     * The rollup's {@code swapstream_host_switches_total} of host trunc, once it is {@code expected} or after the timeout (a
     * series shows 0 at its first scrape, then its value).
     */
    private static long awaitHostSwitches(StageProcess rollup, long expected, Duration timeout) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI uri = java.net.URI.create("http://" + rollup.http() + "/metrics");
        java.util.regex.Pattern p = java.util.regex.Pattern.compile("(?m)^swapstream_host_switches_total\\{[^}]*host=\"trunc\"[^}]*} ([0-9.E]+)$");
        long deadline = System.nanoTime() + timeout.toNanos();
        long seen = -1;
        while (seen != expected && System.nanoTime() < deadline) {
            String body = http.send(java.net.http.HttpRequest.newBuilder(uri).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            java.util.regex.Matcher m = p.matcher(body);
            seen = m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
            if (seen != expected) Thread.sleep(500);
        }
        return seen;
    }

    String logs() throws Exception {
        StringBuilder b = new StringBuilder();
        for (String n : List.of("ingest.log", "decode.log", "aggregate.log", "rollup.log")) {
            Path p = dir.resolve(n);
            if (Files.exists(p)) {
                String s = Files.readString(p);
                b.append("--- ").append(n).append('\n').append(s.length() > 3000 ? s.substring(s.length() - 3000) : s);
            }
        }
        return b.toString();
    }
}
