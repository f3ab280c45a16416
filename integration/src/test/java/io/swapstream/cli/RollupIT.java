package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.SketchBytes;
import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.Rollups;
import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three hosts' traces (one host named like HTML: names from traces are untrusted) through the stages, the rollup stage a process of its own, killed with -9 mid-window
 * (after it has taken rows of two hosts, before their windows close) and started again: its rows on
 * {@code etw.process-stats} (the highest revision of each: a row that came after its window closed went into a
 * revision) equal the offline roll-up of the three hosts, each revision of each (process, window) once,
 * and its API answers with them.
 */
@ExtendWith(KafkaBroker.class)
class RollupIT {
    static final long WINDOW = 60_000_000_000L;
    /** The third host's name: the fleet page must show it as text. */
    static final String HTML_HOST = "<img src=x onerror=alert(1)>";
    static final ObjectMapper JSON = new ObjectMapper();
    @TempDir Path dir;

    @Test
    void killedMidWindowTheRollupLosesAndDoublesNothing(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "roll" + UUID.randomUUID().toString().substring(0, 6) + ".";
        List<Path> traces = new ArrayList<>();
        Rollups offline = new Rollups(RollupGroup.Kind.PROCESS);
        Rollups offlineHosts = new Rollups(RollupGroup.Kind.HOST);
        // the fleet's wake edges: each host's records of an edge and window merged
        Map<String, io.swapstream.schemas.avro.WakeEdge> offlineEdges = new java.util.TreeMap<>();
        for (int h = 1; h <= 3; h++) {
            Path f = dir.resolve("host" + h + ".etl");
            // the third trace the longest: its host is in the latest window the fleet page shows
            TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(h == 3 ? 80_000 : 40_000).withSeed(h).withExitRate(0)
                    .withStartTime(134_000_000_000_000_000L + 35 * 10_000_000L), 0x28);
            traces.add(f);
            SessionStatistics s = new SessionStatistics(WINDOW);
            SessionDecoder.decodeBatches(f, h == 3 ? HTML_HOST : "host" + h, null, s::accept, null);
            s.closeAll();
            offline.addAll(s.windowed());
            offlineHosts.addAll(s.windowed());
            for (var e : s.wakeEdges()) {
                offlineEdges.merge(e.getWindowStartNanos() + " " + e.getWakerProcess() + " " + e.getWokenProcess(), e, (a, b) -> {
                    io.swapstream.aggregate.WakeEdges.merge(a, b);
                    return a;
                });
            }
        }
        List<ProcessStats> expected = offline.processRows();
        assertTrue(expected.stream().map(ProcessStats::getWindowStartNanos).distinct().count() >= 2, "a minute edge");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 4, (short) 1);
        }
        Path client = Files.writeString(dir.resolve("client.properties"), String.join("\n",
                "session.timeout.ms=6000", "heartbeat.interval.ms=1500", "transaction.timeout.ms=10000", "commit.interval.ms=300", ""));
        String[] rollupArgs = {"rollup", "-b", kafka.servers(), "--topic-prefix", prefix, "--partitions", "4", "--client-config",
                client.toString(), "--http", "127.0.0.1:0", "--state-dir", dir.resolve("rollup-state").toString(), "--application-id",
                "roll-" + prefix, "--grace", "30s"};
        Path log = dir.resolve("rollup.log");
        try (Pipeline pipeline = Pipeline.start(kafka.servers(), "roll-" + prefix, dir.resolve("state"), prefix, 4, (short) 1, WINDOW, 1000,
                Map.of("commit.interval.ms", "300"))) {
            StageProcess rollup = StageProcess.start(log, rollupArgs).awaitLog("rollup: running", Duration.ofSeconds(60));
            try {
                publish(kafka, prefix, traces.get(0), "host1");
                publish(kafka, prefix, traces.get(1), "host2");
                awaitMetric(rollup.http(), "swapstream_rows_in_total", 1);
                rollup.kill9(); // rows of two hosts taken, their windows open: the grace is 30 s
                rollup = StageProcess.start(log, rollupArgs).awaitLog("rollup: running", Duration.ofSeconds(60));
                publish(kafka, prefix, traces.get(2), HTML_HOST);
                SingleObjectAvroSerde<ProcessStats> serde = new SingleObjectAvroSerde<>(ProcessStats.class);
                // a row that came after its window closed went into a revision: a reader keeps the highest revision per key
                Map<String, ProcessStats> got = new HashMap<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                while (true) {
                    got.clear();
                    java.util.Set<String> revisions = new java.util.HashSet<>();
                    for (ConsumerRecord<String, byte[]> r : PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.PROCESS_STATS,
                            rs -> rs.size() >= expected.size())) {
                        ProcessStats p = serde.deserialize("t", r.value());
                        assertEquals(RollupTopology.rowKey(p.getProcessName(), p.getWindowStartNanos()), r.key());
                        assertTrue(revisions.add(r.key() + "#" + p.getRevision()), "each revision once: " + r.key() + " " + p.getRevision());
                        got.merge(r.key(), p, (a, b) -> b.getRevision() >= a.getRevision() ? b : a);
                    }
                    boolean complete = got.size() == expected.size() && expected.stream().allMatch(e -> {
                        ProcessStats g = got.get(RollupTopology.rowKey(e.getProcessName(), e.getWindowStartNanos()));
                        return g != null && g.getThreads() == e.getThreads();
                    });
                    if (complete || System.nanoTime() > deadline) break;
                    Thread.sleep(1000);
                }
                assertEquals(expected.size(), got.size());
                for (ProcessStats e : expected) {
                    ProcessStats g = got.get(RollupTopology.rowKey(e.getProcessName(), e.getWindowStartNanos()));
                    // merged in another order, a sketch holds the same counts in a layout of its own: compared by what it gives
                    assertEquals(SketchBytes.read(e.getWaitSketch()).getCount(), SketchBytes.read(g.getWaitSketch()).getCount());
                    assertEquals(withoutSketches(e), ProcessStats.newBuilder(withoutSketches(g)).setRevision(0).setAdded(null).build());
                }
                // and per host
                List<io.swapstream.schemas.avro.HostStats> expectedHosts = offlineHosts.hostRows();
                SingleObjectAvroSerde<io.swapstream.schemas.avro.HostStats> hostSerde = new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.HostStats.class);
                Map<String, io.swapstream.schemas.avro.HostStats> hosts = new HashMap<>();
                for (ConsumerRecord<String, byte[]> r : PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.HOST_STATS,
                        rs -> rs.size() >= expectedHosts.size())) {
                    hosts.merge(r.key(), hostSerde.deserialize("t", r.value()), (a, b) -> b.getRevision() >= a.getRevision() ? b : a);
                }
                for (io.swapstream.schemas.avro.HostStats e : expectedHosts) {
                    io.swapstream.schemas.avro.HostStats g = hosts.get(RollupTopology.rowKey(e.getHost(), e.getWindowStartNanos()));
                    assertEquals(io.swapstream.schemas.avro.HostStats.newBuilder(e).setWaitSketch(null).setReadySketch(null).setRunSketch(null).setReadyIdleWakeSketch(null).setReadyContendedSketch(null).build(),
                            io.swapstream.schemas.avro.HostStats.newBuilder(g).setWaitSketch(null).setReadySketch(null).setRunSketch(null).setReadyIdleWakeSketch(null).setReadyContendedSketch(null)
                                    .setRevision(0).setAdded(null).build());
                }
                assertEquals(expectedHosts.size(), hosts.size());
                // the API answers with them
                HttpClient http = HttpClient.newHttpClient();
                String base = "http://" + rollup.http();
                JsonNode top = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/processes?by=readyP99Nanos&window=all&top=1000"))
                        .build(), HttpResponse.BodyHandlers.ofString()).body());
                assertEquals(expected.size(), top.size());
                assertTrue(top.get(0).path("waitSketch").isMissingNode(), "no sketch bytes unless asked");
                JsonNode host = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/hosts/"
                        + java.net.URLEncoder.encode(HTML_HOST, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20"))).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                assertEquals(HTML_HOST, host.path("host").asText());
                assertTrue(host.path("windows").size() >= 1);
                assertEquals(404, http.send(HttpRequest.newBuilder(URI.create(base + "/api/hosts/nobody")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode());
                assertEquals(400, http.send(HttpRequest.newBuilder(URI.create(base + "/api/processes?by=nonsense")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode());
                // tail prints the roll-up rows, both kinds
                for (String topic : List.of("process-stats", "host-stats")) {
                    CliRunner tail = CliRunner.run("tail", topic, "--from-beginning", "-b", kafka.servers(), "--topic-prefix", prefix);
                    assertEquals(0, tail.exit(), tail.err());
                    List<String> lines = tail.out().lines().toList();
                    assertTrue(lines.size() >= (topic.equals("host-stats") ? expectedHosts.size() : expected.size()), topic + ": " + lines.size());
                    assertTrue(JSON.readTree(lines.get(0)).path("final").asBoolean(), lines.get(0));
                }
                wakes(base, offlineEdges);
                fleetPage(base, expected);
            } finally {
                rollup.close();
            }
        }
    }

    /** The fleet page in headless Chromium: the API's top rows, a host named like HTML shown as text, a chart with a time axis. */
    /** {@code /api/wakes}: app0.exe's wakers and whom it wakes, every kept window, as the offline edges merged over the hosts. */
    static void wakes(String base, Map<String, io.swapstream.schemas.avro.WakeEdge> offline) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        java.util.Set<String> expected = new java.util.TreeSet<>();
        offline.values().stream().filter(e -> e.getWakerProcess().toString().equals("app0.exe") || e.getWokenProcess().toString().equals("app0.exe"))
                .forEach(e -> expected.add(e.getWindowStartNanos() + " " + e.getWakerProcess() + " -> " + e.getWokenProcess() + ": "
                        + e.getWakeCount() + " " + e.getWaitSumNanos() + " " + e.getReadySumNanos() + " p99 " + e.getWaitP99Nanos()));
        assertTrue(expected.size() > 10, expected.toString());
        java.util.Set<String> got = new java.util.TreeSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!got.equals(expected) && System.nanoTime() < deadline) {
            got.clear();
            JsonNode a = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/wakes?process=app0.exe&window=all&top=1000")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            for (String side : List.of("wakers", "wakes")) {
                for (JsonNode e : a.path(side)) {
                    got.add(e.path("windowStartNanos").asLong() + " " + e.path("wakerProcess").asText() + " -> " + e.path("wokenProcess").asText()
                            + ": " + e.path("wakeCount").asLong() + " " + e.path("waitSumNanos").asLong() + " " + e.path("readySumNanos").asLong()
                            + " p99 " + e.path("waitP99Nanos").asLong());
                }
            }
            if (!got.equals(expected)) Thread.sleep(500);
        }
        assertEquals(expected, got);
        assertEquals(400, http.send(HttpRequest.newBuilder(URI.create(base + "/api/wakes")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        // a window past a long is a bad parameter, not a failure
        assertEquals(400, http.send(HttpRequest.newBuilder(URI.create(base + "/api/wakes?process=app0.exe&window=9999999999999999999")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    static void fleetPage(String base, List<ProcessStats> expected) throws Exception {
        Path chrome = Path.of("/usr/bin/chromium");
        Path driverBinary = Path.of("/usr/bin/chromedriver");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(chrome) && Files.isExecutable(driverBinary),
                "no browser: install Debian's chromium and chromium-driver (.ci/run does) to run the fleet-page test");
        var o = new org.openqa.selenium.chrome.ChromeOptions().setBinary(chrome.toFile()).addArguments("--headless=new", "--no-sandbox",
                "--disable-dev-shm-usage", "--disable-gpu");
        var service = new org.openqa.selenium.chrome.ChromeDriverService.Builder().usingDriverExecutable(driverBinary.toFile()).build();
        org.openqa.selenium.WebDriver page = new org.openqa.selenium.chrome.ChromeDriver(service, o);
        try {
            page.get(base + "/");
            JsonNode top = JSON.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    base + "/api/processes?window=each&by=readyP99Nanos&top=100")).build(), HttpResponse.BodyHandlers.ofString()).body());
            ServiceIT.awaitPage(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#processes tbody tr")).size() == top.size());
            List<String> names = ServiceIT.settled(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#processes tbody tr td.name"))
                    .stream().map(org.openqa.selenium.WebElement::getText).toList());
            for (int i = 0; i < top.size(); i++) {
                assertEquals(top.get(i).path("processName").isNull() ? "(unknown)" : top.get(i).path("processName").asText(), names.get(i));
            }
            ServiceIT.awaitPage(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#hosts tbody tr td.name")).stream()
                    .anyMatch(td -> td.getText().equals(HTML_HOST)));
            assertTrue(page.findElements(org.openqa.selenium.By.tagName("img")).isEmpty(), "a host's name is text, never HTML");
            // its style sheet applied under the Content-Security-Policy (no inline style is allowed)
            String headBackground = page.findElement(org.openqa.selenium.By.cssSelector("#processes th")).getCssValue("background-color");
            assertTrue(headBackground.contains("244, 244, 244"), headBackground);
            // a click on a process shows its windows over a time axis
            ServiceIT.settled(page, p -> {
                p.findElements(org.openqa.selenium.By.cssSelector("#processes tbody tr")).get(0).click();
                return true;
            });
            ServiceIT.awaitPage(page, p -> !p.findElements(org.openqa.selenium.By.cssSelector("#group-chart circle.ready")).isEmpty()
                    && !p.findElements(org.openqa.selenium.By.cssSelector("#group-chart text.tick")).isEmpty());
            // issue 58, item 13: the time it was updated in UTC, 24-hour, as the tables; a log axis with no "0" on it
            String updated = page.findElement(org.openqa.selenium.By.id("updated")).getText();
            assertTrue(updated.matches("[0-2][0-9]:[0-5][0-9]:[0-5][0-9] UTC"), "updated " + updated);
            List<String> ticks = ServiceIT.settled(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#group-chart text.ytick")).stream()
                    .map(org.openqa.selenium.WebElement::getText).toList());
            assertTrue(!ticks.isEmpty() && ticks.stream().allMatch(t -> t.matches("1(0|00)? (ns|µs|ms|s)")), "decades only: " + ticks);
            // at 1366 px both tables fit with their important columns (the secondary ones left out), at 820 px too
            PageShots.check(page, "fleet-page", "#processes tbody tr.row", "#group-chart", List.of("process", "window (UTC)", "hosts",
                    "ready p99", "wait p99", "total ready", "host", "processes", "its threads"));
            // and, for a process, who wakes it and whom it wakes: process names as text
            ServiceIT.awaitPage(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#wakes table.wake-table")).size() == 2
                    && p.findElements(org.openqa.selenium.By.cssSelector("#wakes td.name")).stream().anyMatch(td -> td.getText().equals("(interrupt)")));
            // issue 58, item 17: in "each one's latest", a row of a window older than the fleet's latest says so
            long fleetLatest = JSON.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/api/windows")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get(0).path("windowStartNanos").asLong();
            Map<String, Long> windowOf = new HashMap<>();
            for (String kind : List.of("processes", "hosts")) {
                for (JsonNode r : JSON.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/api/" + kind
                        + "?window=each&top=100")).build(), HttpResponse.BodyHandlers.ofString()).body())) {
                    String name = r.path(kind.equals("hosts") ? "host" : "processName").asText("");
                    windowOf.put(kind + "/" + name, r.path("windowStartNanos").asLong());
                }
            }
            assertTrue(windowOf.values().stream().anyMatch(w -> w < fleetLatest), "a host or process whose latest window is older: " + windowOf);
            ServiceIT.awaitPage(page, p -> {
                int marked = 0;
                for (String kind : List.of("processes", "hosts")) {
                    for (org.openqa.selenium.WebElement tr : p.findElements(org.openqa.selenium.By.cssSelector("#" + kind + " tbody tr.row"))) {
                        Long w = windowOf.get(kind + "/" + tr.getAttribute("data-name"));
                        if (w == null) return false;
                        boolean badge = !tr.findElements(org.openqa.selenium.By.cssSelector("td.window .badge")).isEmpty();
                        if (badge != w < fleetLatest || tr.getAttribute("class").contains("stale") != w < fleetLatest) return false;
                        if (badge) marked++;
                    }
                }
                return marked > 0 && p.findElement(org.openqa.selenium.By.id("stale")).getText().contains("marked stale");
            });
            // every column sorts both ways; the window can be picked
            org.openqa.selenium.WebElement nameHead = page.findElements(org.openqa.selenium.By.cssSelector("#processes th")).get(0);
            nameHead.click();
            ServiceIT.awaitPage(page, p -> "ascending".equals(p.findElements(org.openqa.selenium.By.cssSelector("#processes th")).get(0)
                    .getAttribute("aria-sort")));
            java.util.function.Function<org.openqa.selenium.WebDriver, List<String>> shownNames = p -> p.findElements(
                    org.openqa.selenium.By.cssSelector("#processes tbody tr.row td.name")).stream().map(org.openqa.selenium.WebElement::getText).toList();
            // the header changes at the click, the rows when the page has drawn them again: wait for the rows
            ServiceIT.awaitPage(page, p -> {
                List<String> shown = shownNames.apply(p);
                return !shown.isEmpty() && shown.equals(shown.stream().sorted().toList());
            });
            List<String> up = ServiceIT.settled(page, shownNames);
            assertEquals(up.stream().sorted().toList(), up);
            page.findElements(org.openqa.selenium.By.cssSelector("#processes th")).get(0).click();
            ServiceIT.awaitPage(page, p -> "descending".equals(p.findElements(org.openqa.selenium.By.cssSelector("#processes th")).get(0)
                    .getAttribute("aria-sort")));
            JsonNode windows = JSON.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/api/windows")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertTrue(windows.size() >= 2, windows.toString());
            String older = windows.get(windows.size() - 1).path("windowStartNanos").asText();
            ServiceIT.awaitPage(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#window option")).size() == windows.size() + 2);
            new org.openqa.selenium.support.ui.Select(page.findElement(org.openqa.selenium.By.id("window"))).selectByValue(older);
            String olderShown = "showing " + java.time.Instant.ofEpochSecond(0, Long.parseLong(older)).toString().substring(0, 19).replace("T", " ") + " UTC";
            ServiceIT.awaitPage(page, p -> p.findElement(org.openqa.selenium.By.id("window-shown")).getText().equals(olderShown));
            // in the window picked, nothing is stale; a click on a process: who woke whom in that row's window, not a newer one (item 5)
            assertTrue(page.findElements(org.openqa.selenium.By.cssSelector("tr.stale")).isEmpty());
            ServiceIT.settled(page, p -> {
                p.findElements(org.openqa.selenium.By.cssSelector("#processes tbody tr.row")).get(0).click();
                return true;
            });
            String wakesShown = "who woke whom in the window of " + olderShown.substring("showing ".length()) + ", all hosts";
            ServiceIT.awaitPage(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#wakes p")).stream()
                    .anyMatch(e -> e.getText().equals(wakesShown)));
            // a host links to its threads on the aggregate's page
            String link = ServiceIT.settled(page, p -> p.findElements(org.openqa.selenium.By.cssSelector("#hosts a.threads")).get(0)
                    .getAttribute("href"));
            assertTrue(link.startsWith("http://127.0.0.1:8080/?host="), link);
        } finally {
            page.quit();
        }
    }

    static ProcessStats withoutSketches(ProcessStats p) {
        return ProcessStats.newBuilder(p).setWaitSketch(null).setReadySketch(null).setRunSketch(null).setReadyIdleWakeSketch(null).setReadyContendedSketch(null).build();
    }

    static void publish(KafkaBroker.Bootstrap kafka, String prefix, Path f, String host) throws Exception {
        try (BufferPublisher p = new BufferPublisher(kafka.servers(), prefix, Map.of())) {
            p.publish(f, host, null, null);
        }
    }

    /** Waits until the stage's {@code metric} (summed over its series) reaches {@code atLeast}. */
    static void awaitMetric(String http, String metric, double atLeast) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            String body = client.send(HttpRequest.newBuilder(URI.create("http://" + http + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            double sum = 0;
            for (String line : body.split("\n")) if (line.startsWith(metric + "{")) sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (sum >= atLeast) return;
            Thread.sleep(100);
        }
        throw new AssertionError(metric + " never reached " + atLeast);
    }
}
