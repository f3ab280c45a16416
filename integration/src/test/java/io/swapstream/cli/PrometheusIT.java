package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet's statistics in a real Prometheus (Debian's package, started here on loopback): three hosts'
 * traces written as they grow into a folder that {@code ingest --watch} follows, every stage a process of
 * its own, Prometheus scraping all three each second. Through Prometheus's HTTP API: each process's
 * {@code _count} and {@code _sum} equal the {@code etw.process-stats} rows' ready counts and sums (a window's
 * row whole, a revision for what it added); {@code histogram_quantile(0.99, ...)} lands in the bucket that holds
 * the exact p99 of the process's ready times, computed here from the traces; every query of the shipped
 * dashboard answers with data. And {@code promtool check metrics} finds nothing on any stage's own families,
 * which are each the stage's own, without a label that changes at a restart.
 */
@ExtendWith(KafkaBroker.class)
class PrometheusIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();
    @TempDir Path dir;
    final HttpClient http = HttpClient.newHttpClient();

    static Path tool(String name) {
        for (String d : List.of("/usr/bin", "/usr/local/bin", "/usr/sbin")) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) return p;
        }
        return null;
    }

    @Test
    void prometheusAnswersWithTheRollupRowsAndTheDashboardsQueriesHaveData(KafkaBroker.Bootstrap kafka) throws Exception {
        Path prometheus = tool("prometheus");
        Path promtool = tool("promtool");
        Assumptions.assumeTrue(prometheus != null && promtool != null,
                "no Prometheus: install Debian's prometheus package (.ci/run does) to run the test against a real Prometheus");
        String prefix = "prom" + UUID.randomUUID().toString().substring(0, 6) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 4, (short) 1);
        }
        // three hosts, 40 s of trace each from the same minute, their processes named alike (the generator's)
        List<Path> traces = new ArrayList<>();
        for (int h = 1; h <= 3; h++) {
            Path f = dir.resolve("traces-src").resolve("host" + h + ".etl");
            Files.createDirectories(f.getParent());
            TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(40_000).withSeed(h).withExitRate(0)
                    .withStartTime(134_000_000_000_000_000L + 35 * 10_000_000L), 0x28);
            traces.add(f);
        }
        Map<String, long[]> exactReady = exactReadyTimesByProcess(traces);
        Path client = Files.writeString(dir.resolve("client.properties"), String.join("\n",
                "commit.interval.ms=300", "session.timeout.ms=6000", "heartbeat.interval.ms=1500", ""));
        List<String> common = List.of("-b", kafka.servers(), "--topic-prefix", prefix, "--partitions", "4", "--client-config", client.toString(),
                "--http", "127.0.0.1:0", "--application-id", "prom-" + prefix);
        List<StageProcess> stages = new ArrayList<>();
        Process prom = null;
        try {
            StageProcess decode = stage(stages, "decode", common, "--state-dir", dir.resolve("d").toString());
            StageProcess aggregate = stage(stages, "aggregate", common, "--state-dir", dir.resolve("a").toString(), "--window", "10s",
                    "--emit-interval", "1s");
            StageProcess rollup = stage(stages, "rollup", common, "--state-dir", dir.resolve("r").toString(), "--max-wait", "5s", "--grace", "5s");
            for (StageProcess s : stages) s.awaitLog(": running", Duration.ofSeconds(90));
            Path watched = Files.createDirectories(dir.resolve("traces"));
            StageProcess ingest = StageProcess.start(dir.resolve("ingest.log"), "ingest", "--watch", watched.toString(), "--host-from-file-name",
                    "--quiet", "3s", "-b", kafka.servers(), "--topic-prefix", prefix, "--partitions", "4");
            stages.add(ingest);
            // Prometheus, scraping each stage every second
            int port = freePort();
            Path config = Files.writeString(dir.resolve("prometheus.yml"), String.join("\n",
                    "global: {scrape_interval: 1s, evaluation_interval: 1s}",
                    "scrape_configs:",
                    "  - job_name: swapstream",
                    "    static_configs:",
                    "      - targets: [\"" + decode.http() + "\", \"" + aggregate.http() + "\", \"" + rollup.http() + "\"]", ""));
            assertEquals(0, run(promtool, "check", "config", config.toString()).exit);
            // the configuration docker-compose.yml ships, and its alerts
            Result shipped = run(promtool, "check", "config", REPOSITORY.resolve("dashboards/prometheus.yml").toString());
            assertEquals(0, shipped.exit, shipped.out);
            prom = new ProcessBuilder(prometheus.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("tsdb"),
                    "--web.listen-address=127.0.0.1:" + port).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("prometheus.log").toFile()).start();
            String api = "http://127.0.0.1:" + port + "/api/v1/";
            awaitQuery(api, "up", r -> r.size() == 3 && allOne(r));
            // the traces grow as a logger writes them: a fifth of each every two seconds, so that the windows close over time
            for (int part = 1; part <= 5; part++) {
                for (Path t : traces) {
                    byte[] all = Files.readAllBytes(t);
                    int from = (int) ((long) all.length * (part - 1) / 5);
                    int to = (int) ((long) all.length * part / 5);
                    Files.write(watched.resolve(t.getFileName()), java.util.Arrays.copyOfRange(all, from, to), StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                }
                Thread.sleep(2_000);
            }
            // what the roll-up rows say, once every session has ended and its windows are out
            long readyTimes = exactReady.values().stream().mapToLong(v -> v.length).sum();
            Map<String, long[]> rows = awaitRowsCounted(kafka, prefix, api, readyTimes);
            // each series is 0 on its first scrape: increase() counts every window, each host's and process's first too
            double increase = value(api, "sum(increase(swapstream_process_ready_seconds_count[10m]))");
            assertTrue(increase >= readyTimes * 0.999, "increase() counted " + increase + " of " + readyTimes + " ready times");
            for (Map.Entry<String, long[]> e : rows.entrySet()) {
                String selector = "{process=\"" + e.getKey() + "\"}";
                assertEquals(e.getValue()[0], value(api, "swapstream_process_ready_seconds_count" + selector), 0, e.getKey());
                assertEquals(e.getValue()[1] / 1e9, value(api, "swapstream_process_ready_seconds_sum" + selector), 1e-6, e.getKey());
            }
            // the 0.99 quantile Prometheus gives lands in the bucket of the exact p99
            List<Double> bounds = new ArrayList<>();
            for (JsonNode s : query(api, "swapstream_process_ready_seconds_bucket{process=\"" + rows.keySet().iterator().next() + "\"}")) {
                String le = s.path("metric").path("le").asText();
                if (!le.equals("+Inf")) bounds.add(Double.parseDouble(le));
            }
            bounds.sort(Double::compare);
            int checked = 0;
            for (Map.Entry<String, long[]> e : exactReady.entrySet()) {
                long[] v = e.getValue();
                if (v.length < 100 || !rows.containsKey(e.getKey())) continue;
                java.util.Arrays.sort(v);
                double exact = v[(int) Math.ceil(0.99 * v.length) - 1] / 1e9;
                double q = value(api, "histogram_quantile(0.99, swapstream_process_ready_seconds_bucket{process=\"" + e.getKey() + "\"})");
                int bucket = 0;
                while (bucket < bounds.size() && exact > bounds.get(bucket)) bucket++;
                double lower = bucket == 0 ? 0 : bounds.get(bucket - 1);
                double upper = bucket < bounds.size() ? bounds.get(bucket) : Double.POSITIVE_INFINITY;
                assertTrue(q > lower && q <= upper, e.getKey() + ": exact p99 " + exact + " s in (" + lower + ", " + upper + "], Prometheus says " + q);
                checked++;
            }
            assertTrue(checked >= 2, "processes with enough ready times: " + checked);
            // every query of the shipped dashboard answers, with data
            JsonNode dashboard = JSON.readTree(REPOSITORY.resolve("dashboards/swapstream-fleet.json").toFile());
            int queries = 0;
            for (JsonNode panel : dashboard.path("panels")) {
                for (JsonNode target : panel.path("targets")) {
                    String expr = target.path("expr").asText().replace("$process", ".*").replace("$host", ".*")
                            .replace("$__rate_interval", "1m").replace("$__range", "5m").replace("$__interval", "15s");
                    // a rate needs two scrapes of a series: a series the last rows made may be a second old
                    JsonNode r = query(api, expr);
                    for (int wait = 0; r.isEmpty() && wait < 30; wait++) {
                        Thread.sleep(1_000);
                        r = query(api, expr);
                    }
                    assertFalse(r.isEmpty(), "panel '" + panel.path("title").asText() + "': " + expr + " has no data");
                    queries++;
                }
            }
            for (JsonNode v : dashboard.path("templating").path("list")) {
                String q = v.path("definition").asText();
                if (!q.startsWith("label_values(")) continue;
                String metric = q.substring("label_values(".length(), q.indexOf(','));
                assertFalse(query(api, metric).isEmpty(), "variable " + v.path("name").asText());
            }
            assertTrue(queries >= 15, "queries " + queries);
            // each stage's own families only, clean for promtool, no label that a restart changes
            Map<String, String> scraped = new TreeMap<>();
            for (StageProcess s : List.of(decode, aggregate, rollup)) scraped.put(s.http(), get("http://" + s.http() + "/metrics"));
            String d = scraped.get(decode.http());
            String a = scraped.get(aggregate.http());
            String r = scraped.get(rollup.http());
            assertTrue(d.contains("swapstream_dead_letters_total{reason=\"malformed-buffer\",stage=\"decode\"} 0.0"), d);
            assertFalse(d.contains("swapstream_rollups_out_total") || d.contains("swapstream_switches_in_total"), "decode's own only");
            assertFalse(a.contains("swapstream_rollups_out_total") || a.contains("swapstream_buffers_in_total"), "aggregate's own only");
            assertFalse(r.contains("swapstream_switches_in_total") || r.contains("swapstream_sessions_open"), "rollup's own only");
            for (String body : scraped.values()) {
                for (String line : body.split("\n")) {
                    if (!line.startsWith("swapstream_")) continue;
                    assertFalse(line.contains("thread_id=") || line.contains("client_id=") || line.contains("task_id="), line);
                    assertFalse(line.endsWith(" NaN"), line);
                }
                String own = String.join("\n", body.lines().filter(l -> l.startsWith("swapstream_") || l.startsWith("# HELP swapstream_")
                        || l.startsWith("# TYPE swapstream_")).toList()) + "\n";
                Result lint = runWithInput(promtool, own, "check", "metrics");
                assertEquals("", lint.out.strip(), "promtool check metrics on the swapstream_* families");
            }
            assertTrue(value(api, "swapstream_event_lag_seconds{stage=\"decode\"}") < 60, "the event lag is measured in the trace's own time");
            // stopped by a signal (SIGTERM), a stage says so last
            decode.close();
            List<String> lines = Files.readAllLines(dir.resolve("decode.log"));
            assertTrue(lines.get(lines.size() - 1).contains("decode: stopped by a signal; its work is committed"), lines.get(lines.size() - 1));
        } finally {
            if (prom != null) {
                prom.destroy();
                prom.waitFor();
            }
            for (StageProcess s : stages) s.close();
        }
    }

    private StageProcess stage(List<StageProcess> stages, String name, List<String> common, String... more) throws IOException {
        List<String> args = new ArrayList<>(List.of(name));
        args.addAll(common);
        args.addAll(List.of(more));
        StageProcess s = StageProcess.start(dir.resolve(name + ".log"), args.toArray(String[]::new));
        stages.add(s);
        return s;
    }

    /**
     * Per process name, its ready count and sum over the roll-up rows (each window's row whole, each revision's
     * addition), once they stop changing and Prometheus shows the same totals.
     */
    private Map<String, long[]> awaitRowsCounted(KafkaBroker.Bootstrap kafka, String prefix, String api, long readyTimes) throws Exception {
        SingleObjectAvroSerde<ProcessStats> serde = new SingleObjectAvroSerde<>(ProcessStats.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        Map<String, long[]> totals = new TreeMap<>();
        while (System.nanoTime() < deadline) {
            totals.clear();
            List<ConsumerRecord<String, byte[]>> records = PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.PROCESS_STATS,
                    rs -> !rs.isEmpty());
            long count = 0;
            for (ConsumerRecord<String, byte[]> rec : records) {
                ProcessStats p = serde.deserialize("t", rec.value());
                String name = p.getProcessName() == null ? "(unknown)" : p.getProcessName();
                long[] t = totals.computeIfAbsent(name, n -> new long[2]);
                if (p.getRevision() == 0) {
                    t[0] += p.getReadyCount();
                    t[1] += p.getReadySumNanos();
                } else if (p.getAdded() != null) {
                    t[0] += p.getAdded().getReadyCount();
                    t[1] += p.getAdded().getReadySumNanos();
                }
            }
            for (long[] t : totals.values()) count += t[0];
            JsonNode shown = query(api, "sum(swapstream_process_ready_seconds_count)");
            // every ready time of the traces is in the rows, and Prometheus has counted them all
            if (count == readyTimes && !shown.isEmpty() && shown.get(0).path("value").get(1).asDouble() == count) return totals;
            Thread.sleep(2_000);
        }
        throw new AssertionError("the roll-up rows never held the traces' " + readyTimes + " ready times, counted by Prometheus: " + totals.keySet());
    }

    /** Every ready time of the traces, by the process name of the thread readied ("(unknown)" for none). */
    static Map<String, long[]> exactReadyTimesByProcess(List<Path> traces) throws Exception {
        Map<String, List<Long>> bySessionThread = new HashMap<>();
        Map<String, String> processOf = new HashMap<>();
        for (Path f : traces) {
            String host = f.getFileName().toString().replace(".etl", "");
            SessionDecoder.decodeBatches(f, host, null, (SwitchBatch b) -> {
                for (io.swapstream.batch.ThreadLabel t : b.threads()) {
                    if (t.processName() != null) processOf.put(host + "/" + t.threadId(), t.processName());
                }
                for (int i = 0; i < b.count(); i++) {
                    long ready = b.newThreadReadyNanos(i);
                    if (ready == SwitchBatch.NO_TIME) continue;
                    bySessionThread.computeIfAbsent(host + "/" + b.newThreadId(i), k -> new ArrayList<>()).add(ready);
                }
            }, null);
        }
        Map<String, List<Long>> byProcess = new HashMap<>();
        bySessionThread.forEach((thread, times) -> byProcess.computeIfAbsent(processOf.getOrDefault(thread, "(unknown)"), k -> new ArrayList<>())
                .addAll(times));
        Map<String, long[]> out = new TreeMap<>();
        byProcess.forEach((p, times) -> out.put(p, times.stream().mapToLong(Long::longValue).toArray()));
        return out;
    }

    private JsonNode query(String api, String promql) throws Exception {
        JsonNode r = JSON.readTree(get(api + "query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)));
        assertEquals("success", r.path("status").asText(), promql + ": " + r);
        return r.path("data").path("result");
    }

    private double value(String api, String promql) throws Exception {
        JsonNode r = query(api, promql);
        assertEquals(1, r.size(), promql + ": " + r);
        return r.get(0).path("value").get(1).asDouble();
    }

    private void awaitQuery(String api, String promql, java.util.function.Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (done.test(query(api, promql))) return;
            } catch (IOException e) {
                // Prometheus still starting
            }
            Thread.sleep(500);
        }
        throw new AssertionError(promql + " never answered as expected; see " + dir.resolve("prometheus.log"));
    }

    private static boolean allOne(JsonNode result) {
        for (JsonNode s : result) if (!s.path("value").get(1).asText().equals("1")) return false;
        return true;
    }

    private String get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    record Result(int exit, String out) {}

    private static Result run(Path tool, String... args) throws Exception {
        return runWithInput(tool, null, args);
    }

    private static Result runWithInput(Path tool, String stdin, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(tool.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (stdin != null) p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), out);
    }
}
