package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.json.RecordJson;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The stages as an operator runs them: decode and two aggregate instances as separate processes
 * sharing the work, three hosts' sessions published at once. Both instances answer the query API
 * for every session (asking the owner over HTTP), equal to the offline statistics; the live page
 * shows what the API returns and updates by itself; with one instance killed -9, the other takes
 * its partitions over and its answers stay complete.
 */
@ExtendWith(KafkaBroker.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServiceIT {
    static final ObjectMapper JSON = new ObjectMapper();
    final HttpClient http = HttpClient.newHttpClient();
    final String prefix = "svc" + UUID.randomUUID().toString().substring(0, 6) + ".";
    Path dir;
    KafkaBroker.Bootstrap kafka;
    StageProcess decode;
    StageProcess a;
    StageProcess b;
    /** Whole-session rows of the offline statistics, by session, as the API writes them. */
    final Map<String, Map<Integer, JsonNode>> offline = new HashMap<>();
    long offlineSwitches;

    @BeforeAll
    void start(KafkaBroker.Bootstrap kafka) throws Exception {
        this.kafka = kafka;
        dir = Files.createTempDirectory("service-it");
        decode = StageProcess.start(dir.resolve("decode.log"), args("decode", "decode"))
                .awaitLog("decode: running", Duration.ofSeconds(60));
        a = aggregate("a");
        b = aggregate("b");
        List<Thread> publishers = new ArrayList<>();
        for (String host : List.of("web01", "web02", "db01")) {
            Path f = trace(host, 20_000);
            publishers.add(publish(f, host));
        }
        for (Thread t : publishers) t.join();
        awaitFinal(a, 3);
    }

    @AfterAll
    void stop() throws Exception {
        for (StageProcess p : new StageProcess[] {decode, a, b}) if (p != null) p.close();
    }

    String[] args(String stage, String instance) throws Exception {
        Path client = Files.writeString(dir.resolve("client.properties"), String.join("\n",
                "session.timeout.ms=6000", "heartbeat.interval.ms=1500", "transaction.timeout.ms=10000", "commit.interval.ms=300", ""));
        return new String[] {stage, "-b", kafka.servers(), "--topic-prefix", prefix, "--partitions", "4", "--client-config",
                client.toString(), "--http", "127.0.0.1:0", "--state-dir", dir.resolve("state-" + instance).toString(),
                "--application-id", "svc-" + prefix};
    }

    StageProcess aggregate(String instance) throws Exception {
        List<String> a = new ArrayList<>(List.of(args("aggregate", instance)));
        a.addAll(List.of("--window", "1s", "--emit-interval", "500ms", "--keep-windows", "3"));
        return StageProcess.start(dir.resolve("aggregate-" + instance + ".log"), a.toArray(String[]::new))
                .awaitLog("aggregate: running", Duration.ofSeconds(60));
    }

    Path trace(String host, long switches) throws Exception {
        Path f = dir.resolve(host + ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(switches).withShape(4, 4, 3).withSeed(host.hashCode());
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        SessionStatistics s = new SessionStatistics(0);
        long[] n = {0};
        SessionDecoder d = SessionDecoder.decodeBatches(f, host, null, batch -> {
            n[0] += batch.count();
            s.accept(batch);
        }, null);
        offlineSwitches += n[0];
        Map<Integer, JsonNode> rows = new HashMap<>();
        // the API's rows are the topic's without their sketch bytes
        for (ThreadStats t : s.wholeSession()) {
            rows.put(t.getThreadId(), JSON.readTree(RecordJson.toJson(ThreadStats.newBuilder(t).setWaitSketch(null).setReadySketch(null)
                    .setRunSketch(null).setReadyIdleWakeSketch(null).setReadyContendedSketch(null).build())));
        }
        offline.put(d.session().session(), rows);
        return f;
    }

    Thread publish(Path f, String host) {
        Thread t = new Thread(() -> {
            try (BufferPublisher p = new BufferPublisher(kafka.servers(), prefix, Map.of())) {
                p.publish(f, host, null, null);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        t.start();
        return t;
    }

    record Answer(int status, JsonNode body) {}

    Answer get(StageProcess p, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + p.http() + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), r.body().isEmpty() || !r.body().startsWith("{") && !r.body().startsWith("[")
                ? null : JSON.readTree(r.body()));
    }

    void awaitFinal(StageProcess p, int sessions) throws Exception {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            Answer r = get(p, "/api/sessions");
            if (r.status() == 200) {
                int done = 0;
                for (JsonNode s : r.body()) if (s.path("final").asBoolean()) done++;
                if (done >= sessions) return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("sessions not final within 120 s: " + get(p, "/api/sessions").body());
    }

    /** Encoded for a path segment or a query value: a space as %20 (a '+' in a path is a '+'). */
    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Every session's whole-session rows from {@code p} equal the offline statistics, row for row. */
    void assertAnswersComplete(StageProcess p) throws Exception {
        for (var e : offline.entrySet()) {
            Map<Integer, JsonNode> rows = new HashMap<>();
            // a page of 1000 at most: the pages one after another until one is short
            for (int offset = 0; ; offset += 1000) {
                Answer r = get(p, "/api/threads?session=" + enc(e.getKey()) + "&top=1000&offset=" + offset);
                assertEquals(200, r.status(), String.valueOf(r.body()));
                // the API adds each row's readiers by process name (readiedBy): the row itself is the topic's
                for (JsonNode n : r.body()) rows.put(n.path("threadId").asInt(), ((com.fasterxml.jackson.databind.node.ObjectNode) n.deepCopy()).without("readiedBy"));
                if (r.body().size() < 1000) break;
            }
            assertEquals(e.getValue(), rows, "session " + e.getKey() + " from " + p.http());
        }
    }

    @Test
    @Order(1)
    void eitherInstanceAnswersForEverySessionAsTheOfflineStatistics() throws Exception {
        assertAnswersComplete(a);
        assertAnswersComplete(b);
        Answer sessions = get(b, "/api/sessions");
        assertEquals(3, sessions.body().size());
        for (JsonNode s : sessions.body()) {
            assertTrue(s.path("complete").asBoolean(), s.toString());
            assertEquals(s.path("switchCount").asLong(), s.path("switchesCounted").asLong(), s.toString());
        }
        assertEquals(get(a, "/api/threads?top=7&by=waitSumNanos").body(), get(b, "/api/threads?top=7&by=waitSumNanos").body());
        String anySession = offline.keySet().iterator().next();
        int tid = offline.get(anySession).keySet().iterator().next();
        Answer thread = get(b, "/api/threads/" + enc(anySession) + "/" + tid);
        assertEquals(offline.get(anySession).get(tid), ((com.fasterxml.jackson.databind.node.ObjectNode) thread.body().path("whole")).without("readiedBy"));
        assertTrue(thread.body().path("windows").size() > 0, "kept windows");
        assertTrue(thread.body().path("windows").size() <= 3, "no more than --keep-windows");
        assertEquals(3, thread.body().path("windowsKept").asInt(), "the answer says how many windows are kept");
        assertTrue(thread.body().has("earlierWindowsDropped"));
        for (JsonNode w : thread.body().path("windows")) assertEquals(tid, w.path("threadId").asInt());
        // bad requests: one line, and the right status
        // both instances tag their answers (the owner by its rows' version, the other by the answer's bytes); a client holding the tag
        // gets a 304 while no row changes
        int tagged = 0;
        for (StageProcess p : List.of(a, b)) {
            URI uri = URI.create("http://" + p.http() + "/api/threads?top=5&session=" + enc(anySession));
            HttpResponse<String> first = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, first.statusCode());
            var etag = first.headers().firstValue("ETag");
            if (etag.isEmpty()) continue;
            tagged++;
            HttpResponse<String> again = http.send(HttpRequest.newBuilder(uri).header("If-None-Match", etag.get()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(304, again.statusCode(), "nothing changed since");
            assertEquals("", again.body());
        }
        assertEquals(2, tagged, "every answer has an ETag");
        assertEquals(400, get(a, "/api/threads?by=nonsense").status());
        assertEquals(400, get(a, "/api/threads?top=0").status());
        assertEquals(400, get(a, "/api/threads?session=").status());
        assertEquals(200, get(a, "/api/threads?top=1000&by=priorityMin").status(), "any numeric field");
        assertEquals(400, get(a, "/api/threads?top=1001").status(), "1000 rows at most: more a page at a time");
        assertEquals(400, get(a, "/api/threads?top=99999999999999").status());
        assertEquals(400, get(a, "/api/threads?top=1000&offset=9001").status(), "offset + top at most 10,000");
        // from either instance, the pages of a ranking are the ranking
        JsonNode seven = get(a, "/api/threads?top=7&by=waitSumNanos").body();
        for (StageProcess p : List.of(a, b)) {
            com.fasterxml.jackson.databind.node.ArrayNode pages = JSON.createArrayNode();
            pages.addAll((com.fasterxml.jackson.databind.node.ArrayNode) get(p, "/api/threads?top=4&by=waitSumNanos").body());
            pages.addAll((com.fasterxml.jackson.databind.node.ArrayNode) get(p, "/api/threads?top=3&offset=4&by=waitSumNanos").body());
            assertEquals(seven, pages, "from " + p.http());
        }
        // decoded once: a '%' is a session that is not there, not a failure
        assertEquals(404, get(a, "/api/threads/%25/1").status());
        assertEquals(400, get(a, "/api/threads/" + enc(anySession) + "/x").status());
        assertEquals(404, get(a, "/api/threads?session=nobody").status());
        assertEquals(404, get(a, "/api/threads/" + enc(anySession) + "/999999").status());
        assertEquals(404, get(a, "/api/nothing").status());
        assertEquals(200, get(a, "/health").status());
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create("http://" + a.http() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(metrics.body().contains("swapstream_switches_in_total{stage=\"aggregate\"}"), "own metrics");
        assertTrue(metrics.body().contains("swapstream_kafka_streams_alive_threads{stage=\"aggregate\"}"), "Kafka Streams' own, chosen");
        assertFalse(metrics.body().contains("thread_id=\""), "no label that a restart changes");
        assertTrue(get(decode, "/nothing").body().has("error"), "an unknown path on decode: the one error shape, JSON");
        HttpResponse<String> sessionList = http.send(HttpRequest.newBuilder(URI.create("http://" + a.http() + "/api/sessions")).build(),
                HttpResponse.BodyHandlers.ofString());
        String etag = sessionList.headers().firstValue("ETag").orElseThrow();
        assertEquals(304, http.send(HttpRequest.newBuilder(URI.create("http://" + a.http() + "/api/sessions")).header("If-None-Match", etag).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode(), "the sessions' answer has an ETag too");
        for (JsonNode s : JSON.readTree(sessionList.body())) assertTrue(s.path("threads").asLong() <= s.path("threadRecords").asLong(), s.toString());
        assertEquals(400, get(a, "/api/threads?foo=bar").status(), "an unknown parameter");
        HttpResponse<String> decoded = http.send(HttpRequest.newBuilder(URI.create("http://" + decode.http() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(decoded.body().contains("swapstream_switches_out_total{stage=\"decode\"} " + offlineSwitches + ".0"),
                "the decode stage sent every switch");
        // the files were published whole, with their lateness: nothing out of order, and the ended sessions' merges hold nothing
        assertTrue(decoded.body().contains("swapstream_switches_out_of_order_total{stage=\"decode\"} 0.0"), decoded.body());
        assertTrue(decoded.body().contains("swapstream_merge_queued_items{stage=\"decode\"} 0.0"), decoded.body());
        // every session ended: nothing is held back, in the traces' own time
        assertTrue(decoded.body().contains("swapstream_event_lag_seconds{stage=\"decode\"} 0.0"), decoded.body());
        assertTrue(metrics.body().contains("swapstream_event_lag_seconds{stage=\"aggregate\"}"), "and the aggregate's");
    }

    @Test
    @Order(2)
    void theLivePageShowsTheApiRowsAndUpdatesItself() throws Exception {
        Path chrome = Path.of("/usr/bin/chromium");
        Path driverBinary = Path.of("/usr/bin/chromedriver");
        Assumptions.assumeTrue(Files.isExecutable(chrome) && Files.isExecutable(driverBinary),
                "no browser: install Debian's chromium and chromium-driver (.ci/run does) to run the live-page test");
        ChromeOptions o = new ChromeOptions().setBinary(chrome.toFile()).addArguments("--headless=new", "--no-sandbox",
                "--disable-dev-shm-usage", "--disable-gpu");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driverBinary.toFile()).build();
        WebDriver page = new ChromeDriver(service, o);
        try {
            page.get("http://" + a.http() + "/");
            JsonNode top = get(a, "/api/threads?top=100&by=waitP99Nanos").body();
            awaitPage(page, p -> p.findElements(By.cssSelector("#threads tbody tr.row")).size() == top.size());
            List<String> keys = settled(page, p -> p.findElements(By.cssSelector("#threads tbody tr.row")).stream()
                    .map(r -> r.getAttribute("data-key")).toList());
            for (int i = 0; i < top.size(); i++) {
                assertEquals(top.get(i).path("session").asText() + "/" + top.get(i).path("threadId").asInt(), keys.get(i), "row " + i);
            }
            assertEquals("3 session(s) on 3 host(s)", page.findElement(By.id("sessions")).getText());
            // issue 57: the session list links each session's trace
            List<String> sessionLinks = settled(page, p -> p.findElements(By.cssSelector("#session-list a")).stream()
                    .map(e -> e.getAttribute("href")).sorted().toList());
            String sessionsBase = "http://" + a.http() + "/api/sessions/";
            assertEquals(offline.keySet().stream().map(s -> sessionsBase + enc(s) + "/etl").sorted().toList(), sessionLinks);
            // its style sheet applied under the Content-Security-Policy (no inline style is allowed)
            String headBackground = page.findElement(By.cssSelector("#threads th")).getCssValue("background-color");
            assertTrue(headBackground.contains("244, 244, 244"), headBackground);
            // a click on a column's header ranks by it on the server (▼), a second turns the rows around (▲)
            page.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).click();
            JsonNode byReady = get(a, "/api/threads?top=100&by=readyP99Nanos").body();
            String firstByReady = byReady.get(0).path("session").asText() + "/" + byReady.get(0).path("threadId").asInt();
            String lastByReady = byReady.get(byReady.size() - 1).path("session").asText() + "/" + byReady.get(byReady.size() - 1).path("threadId").asInt();
            awaitPage(page, p -> firstByReady.equals(p.findElements(By.cssSelector("#threads tbody tr.row")).get(0).getAttribute("data-key")));
            assertEquals("descending", page.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).getAttribute("aria-sort"));
            page.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).click();
            awaitPage(page, p -> "ascending".equals(p.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).getAttribute("aria-sort")));
            long least = java.util.stream.StreamSupport.stream(byReady.spliterator(), false).filter(r -> r.path("readyP99Nanos").isNumber())
                    .mapToLong(r -> r.path("readyP99Nanos").asLong()).min().orElseThrow();
            // the rows are drawn again after the header changes: wait for them, not for a fixed time
            awaitPage(page, p -> {
                List<org.openqa.selenium.WebElement> rows = p.findElements(By.cssSelector("#threads tbody tr.row"));
                if (rows.isEmpty()) return false;
                String key = rows.get(0).getAttribute("data-key");
                for (JsonNode r : byReady) {
                    if ((r.path("session").asText() + "/" + r.path("threadId").asInt()).equals(key)) return r.path("readyP99Nanos").asLong() == least;
                }
                return false;
            });
            String ascendingFirst = settled(page, p -> p.findElements(By.cssSelector("#threads tbody tr.row")).get(0).getAttribute("data-key"));
            assertEquals(least, rowOf(byReady, ascendingFirst).path("readyP99Nanos").asLong(), "ascending: the least ready p99 first, not " + lastByReady);
            page.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).click();
            awaitPage(page, p -> "descending".equals(p.findElement(By.cssSelector("#threads th[data-by=readyP99Nanos]")).getAttribute("aria-sort")));
            // a text column sorts too, both ways
            org.openqa.selenium.WebElement hostHead = page.findElements(By.cssSelector("#threads th")).get(0);
            hostHead.click();
            awaitPage(page, p -> "ascending".equals(p.findElements(By.cssSelector("#threads th")).get(0).getAttribute("aria-sort")));
            // the header's state changes at the click, the rows when the page has drawn them again: wait for the rows
            java.util.function.Function<WebDriver, List<String>> hostColumn = p -> p.findElements(By.cssSelector("#threads tbody tr.row td:first-child"))
                    .stream().map(org.openqa.selenium.WebElement::getText).toList();
            awaitPage(page, p -> {
                List<String> shown = hostColumn.apply(p);
                return !shown.isEmpty() && shown.equals(shown.stream().sorted().toList());
            });
            List<String> hostsUp = settled(page, hostColumn);
            assertEquals(hostsUp.stream().sorted().toList(), hostsUp, "hosts A to Z");
            page.findElements(By.cssSelector("#threads th")).get(0).click();
            awaitPage(page, p -> "descending".equals(p.findElements(By.cssSelector("#threads th")).get(0).getAttribute("aria-sort")));
            // readying threads by their processes' names, on one line
            JsonNode firstRow = rowOf(byReady, firstByReady);
            Map<String, Long> byProcess = new java.util.LinkedHashMap<>();
            for (JsonNode r : firstRow.path("readiedBy")) {
                byProcess.merge(r.path("processName").isNull() ? "thread " + r.path("threadId").asInt() : r.path("processName").asText(),
                        r.path("count").asLong(), Long::sum);
            }
            assertFalse(byProcess.isEmpty(), "the first thread by ready time was readied by someone: " + firstRow);
            String readiers = settled(page, p -> p.findElement(By.cssSelector("#threads tbody tr[data-key='" + firstByReady + "']"))
                    .findElement(By.cssSelector("td.readiers")).getAttribute("title"));
            for (String process : byProcess.keySet()) assertTrue(readiers.contains(process + " "), readiers + " names " + process);
            // each row names its session by its start; the whole id in its tooltip
            assertEquals(firstRow.path("session").asText(), settled(page, p -> p.findElement(By.cssSelector("#threads tbody tr[data-key='"
                    + firstByReady + "']")).findElements(By.tagName("td")).get(17).getAttribute("title")));
            // the filter: one host's threads only
            String host = firstRow.path("host").asText();
            page.findElement(By.id("filter")).sendKeys(host);
            awaitPage(page, p -> p.findElements(By.cssSelector("#threads tbody tr.row td:first-child")).stream()
                    .allMatch(td -> td.getText().equals(host)));
            page.findElement(By.id("filter")).clear();
            page.findElement(By.id("filter")).sendKeys(org.openqa.selenium.Keys.SPACE, org.openqa.selenium.Keys.BACK_SPACE);
            awaitPage(page, p -> p.findElements(By.cssSelector("#threads tbody tr.row")).size() == byReady.size());
            // a click shows that thread's windows right under it; the row stays the same element, selected, through refreshes
            org.openqa.selenium.WebElement clicked = settled(page, p -> {
                org.openqa.selenium.WebElement row = p.findElements(By.cssSelector("#threads tbody tr.row")).get(0);
                row.click();
                return row;
            });
            awaitPage(page, p -> !p.findElements(By.cssSelector("#windows circle.wait")).isEmpty()
                    && !p.findElements(By.cssSelector("#windows text.tick")).isEmpty());
            assertEquals("chart-row", (String) ((org.openqa.selenium.JavascriptExecutor) page)
                    .executeScript("return arguments[0].nextElementSibling.id", clicked), "the chart is in the row under the clicked one");
            int refreshes = Integer.parseInt(page.findElement(By.id("refreshes")).getText());
            awaitPage(page, p -> Integer.parseInt(p.findElement(By.id("refreshes")).getText()) >= refreshes + 2);
            assertTrue(clicked.getAttribute("class").contains("selected"), "the selection survives two refreshes, in place");
            // issue 58, item 13: the time it was updated in UTC, 24-hour, as the tables; a log axis with no "0" on it
            String updated = page.findElement(By.id("updated")).getText();
            assertTrue(updated.matches("[0-2][0-9]:[0-5][0-9]:[0-5][0-9] UTC"), "updated " + updated);
            List<String> ticks = settled(page, p -> p.findElements(By.cssSelector("#windows text.ytick")).stream()
                    .map(org.openqa.selenium.WebElement::getText).toList());
            assertFalse(ticks.isEmpty());
            for (String tick : ticks) assertTrue(tick.matches("1(0|00)? (ns|µs|ms|s)"), "a decade on the log axis, not '" + tick + "': " + ticks);
            // at 1366 px the table fits with its important columns (the secondary ones left out), at 820 px too
            PageShots.check(page, "live-page", "#threads tbody tr.row", "#windows",
                    List.of("host", "process", "thread", "wait p99", "ready p99", "readied by", "priority", "state", "session start"));
            assertEquals(200, get(a, "/favicon.ico").status());
            // issue 57: under the chart, the trace itself: the whole session, the file its host wrote, and each kept window
            List<String> hrefs = settled(page, p -> p.findElements(By.cssSelector("#chart-row .etl-links a")).stream()
                    .map(e -> e.getAttribute("href")).toList());
            String clickedKey = clicked.getAttribute("data-key");
            String clickedSession = clickedKey.substring(0, clickedKey.lastIndexOf('/'));
            assertEquals("http://" + a.http() + "/api/sessions/" + enc(clickedSession) + "/etl", hrefs.get(0));
            assertTrue(hrefs.size() >= 2 && hrefs.get(1).startsWith(hrefs.get(0) + "?from="), hrefs.toString());
            HttpResponse<byte[]> etl = http.send(HttpRequest.newBuilder(URI.create(hrefs.get(0))).timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, etl.statusCode());
            assertArrayEquals(Files.readAllBytes(dir.resolve(clickedSession.substring(0, clickedSession.indexOf(':')) + ".etl")), etl.body(),
                    "the link gives the file its host wrote");
            // a fourth host's session arrives: the page shows it without a reload
            publish(trace("app01", 5_000), "app01").join();
            awaitPage(page, p -> p.findElement(By.id("sessions")).getText().equals("4 session(s) on 4 host(s)"));
            awaitFinal(a, 4);
        } finally {
            page.quit();
        }
    }

    static JsonNode rowOf(JsonNode rows, String key) {
        for (JsonNode r : rows) if ((r.path("session").asText() + "/" + r.path("threadId").asInt()).equals(key)) return r;
        throw new AssertionError("no row " + key);
    }

    /** What {@code read} finds on the page, read again when the page redrew its table while it read (it refreshes itself). */
    static <T> T settled(WebDriver page, java.util.function.Function<WebDriver, T> read) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return read.apply(page);
            } catch (org.openqa.selenium.StaleElementReferenceException e) {
                if (attempt == 20) throw e;
                Thread.sleep(100);
            }
        }
    }

    static void awaitPage(WebDriver page, java.util.function.Predicate<WebDriver> ready) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                if (ready.test(page)) return;
            } catch (org.openqa.selenium.StaleElementReferenceException e) {
                // the page redrew its table while we read it: look again
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the page did not get there within 60 s:\n" + page.getPageSource());
    }

    @Test
    @Order(3)
    void whenOneInstanceIsKilledTheOtherAnswersForAll() throws Exception {
        b.kill9();
        // the group notices the death after session.timeout.ms, then moves and restores b's tasks: a bound, not a timing
        long deadline = System.nanoTime() + 300_000_000_000L;
        AssertionError last = null;
        while (System.nanoTime() < deadline) {
            try {
                assertAnswersComplete(a);
                awaitFinal(a, offline.size());
                return;
            } catch (AssertionError e) {
                last = e; // the group is still rebalancing, or a store restoring
                Thread.sleep(500);
            }
        }
        throw last;
    }
}
