package io.swapstream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.RowIndex;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.streams.AggregateQueryState;
import io.swapstream.aggregate.streams.AggregateTopology;
import io.swapstream.aggregate.streams.RowIndexes;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.json.RecordJson;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The aggregate stage's query API over stores in memory, one instance with two tasks: {@code /api/threads} (ranked,
 * paged, by session and window), {@code /api/threads/SESSION/TID}, {@code /api/sessions}, their ETags and their refusals.
 */
@Timeout(120) // a guard only: the one test over HTTP bounds each request itself
class StatsApiTest {
    static final long MINUTE = 60_000_000_000L;
    /** 00:13 of a day: the sessions' windows are 00:13 and 00:14. */
    static final long T13 = 1_764_288_780_000_000_000L;
    static final long T14 = T13 + MINUTE;
    static final String WEB01 = "web01:NT Kernel Logger:134000000000000000";
    static final String WEB02 = "web02:NT Kernel Logger:134000000000000001";
    /** A session the decode stage announced, with no row yet. */
    static final String WEB03 = "web03:NT Kernel Logger:134000000000000002";

    final TreeMap<String, Object> stats = new TreeMap<>();
    final TreeMap<String, Object> labels = new TreeMap<>();
    final TreeMap<String, Object> records = new TreeMap<>();
    final TreeMap<String, Object> progress = new TreeMap<>();
    final RowIndexes indexes = new RowIndexes();
    /** web01's partition and web02's, as a session's rows are its partition's. */
    final RowIndex task0 = AggregateQueryState.open(indexes, "0_0");
    final RowIndex task1 = AggregateQueryState.open(indexes, "0_1");
    boolean queryable = true;
    final StatsApi api = new StatsApi(name -> {
        if (!queryable) throw new InvalidStateStoreException("the stores are migrating");
        return new MapStore(switch (name) {
            case AggregateTopology.STATS_STORE -> stats;
            case AggregateTopology.THREADS_STORE -> labels;
            case AggregateTopology.SESSION_RECORDS_STORE -> records;
            case AggregateTopology.SESSIONS_STORE -> progress;
            default -> throw new IllegalArgumentException(name);
        });
    }, () -> "REBALANCING", indexes, new Peers(null, "127.0.0.1:8080", "http", null));

    StageHttp.Response answer(String path, Map<String, String> query, String ifNoneMatch) throws Exception {
        return api.answer(new StageHttp.Request(path, query, ifNoneMatch, null));
    }

    JsonNode get(String path, Map<String, String> query) throws Exception {
        StageHttp.Response r = answer(path, query, null);
        assertEquals(200, r.status(), new String(r.body(), StandardCharsets.UTF_8));
        assertEquals("application/json", r.contentType());
        return RecordJson.MAPPER.readTree(r.body());
    }

    StageHttp.HttpProblem refused(String path, Map<String, String> query) {
        return assertThrows(StageHttp.HttpProblem.class, () -> answer(path, query, null), path + " " + query);
    }

    /** Each row as session/thread, or session/thread@window for a window's. */
    static List<String> rows(JsonNode answer) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : answer) {
            String row = n.path("session").asText().substring(0, 5) + "/" + n.path("threadId").asInt();
            long start = n.path("windowStartNanos").asLong();
            out.add(start == T13 ? row + "@13" : start == T14 ? row + "@14" : row);
        }
        return out;
    }

    static ThreadStats row(String session, int tid, long start, long end, Long waitP99, long readyCount, Map<String, Long> readiers) {
        return ThreadStats.newBuilder().setSession(session).setHost(session.substring(0, 5)).setThreadId(tid).setProcessId(700)
                .setProcessName("app.exe").setWindowStartNanos(start).setWindowEndNanos(end).setSwitchInCount(10)
                .setSwitchOutCount(10).setVoluntarySwitchOutCount(8).setInvoluntarySwitchOutCount(2).setWaitReasonCounts(Map.of())
                .setWaitReasonBitMap(0).setWaitCount(8).setWaitSumNanos(8000).setWaitP99Nanos(waitP99).setNewThreadWaitTicksCount(0)
                .setNewThreadWaitTicksSum(0).setRunCount(10).setRunSumNanos(5000).setPriorityHistogram(List.of())
                .setReadyCount(readyCount).setTopReadiers(readiers).build();
    }

    /** A thread's whole-session row, its first switch at {@code first}, as a task emits it: into the store and its index. */
    ThreadStats whole(RowIndex task, String session, int tid, long first, Long waitP99, long readyCount, Map<String, Long> readiers) {
        ThreadStats r = row(session, tid, first, T14 + MINUTE, waitP99, readyCount, readiers);
        String key = ThreadStatsFields.key(session, tid, null);
        stats.put(key, r);
        task.put(key, r, null);
        return r;
    }

    void window(RowIndex task, String session, int tid, long window, long waitP99) {
        ThreadStats r = row(session, tid, window, window + MINUTE, waitP99, 1, Map.of());
        String key = AggregateTopology.windowRowKey(session, window, tid);
        stats.put(key, r);
        task.put(key, r, window);
    }

    void label(String session, int tid, String processName) {
        labels.put(session + "/" + tid, ThreadInfo.newBuilder().setSession(session).setThreadId(tid).setProcessName(processName).build());
    }

    void record(String session, String endReason, List<String> lossReasons) {
        records.put(session, TraceSession.newBuilder().setSession(session).setHost(session.substring(0, 5)).setLoggerName("NT Kernel Logger")
                .setLogFileName("C:\\traces\\" + session.substring(0, 5) + ".etl").setBuild(26100).setNumberOfProcessors(8)
                .setPointerSize(8).setClockType("QPC").setPerfFreq(10_000_000).setLogFileMode("0x1").setLogFileModeNames(List.of())
                .setStartTimeNanos(T13 - 5 * MINUTE).setEndTimeNanos(T14 + MINUTE).setBootTimeNanos(0).setEventsLost(3)
                .setBuffersLost(0).setMaximumWaitReason(37).setSwitchCount(1234L).setEndReason(endReason)
                .setComplete(endReason != null && lossReasons.isEmpty()).setLossReasons(lossReasons).build());
    }

    /**
     * web01 (task 0): threads 4, 8, 11 and 1, windows 00:13 and 00:14; web02 (task 1): threads 4 and 5 (no p99), window 00:13.
     */
    void twoSessions() {
        Map<String, Long> readiers = new java.util.LinkedHashMap<>(); // ties in the order that is not the answer's
        readiers.put("99", 5L);
        readiers.put("11", 9L);
        readiers.put("8", 5L);
        whole(task0, WEB01, 4, T13 - 5 * MINUTE, 300L, 1, readiers);
        whole(task0, WEB01, 8, T13 - 4 * MINUTE, 100L, 9, Map.of());
        whole(task0, WEB01, 11, T14 + 1000, 200L, 5, Map.of());
        whole(task0, WEB01, 1, T13 - 3 * MINUTE, 50L, 2, Map.of());
        whole(task1, WEB02, 4, T13 - MINUTE, 300L, 3, Map.of());
        whole(task1, WEB02, 5, T13 - MINUTE, null, 0, Map.of());
        window(task0, WEB01, 4, T13, 30);
        window(task0, WEB01, 4, T14, 40);
        window(task0, WEB01, 11, T14, 45);
        window(task1, WEB02, 4, T13, 60);
        label(WEB01, 8, "svc.exe");
        label(WEB01, 11, "app.exe");
        record(WEB01, "end of file", List.of());
        record(WEB02, null, List.of());
    }

    @Test
    void threadsAreRankedByTheFieldAskedPagedAndOfTheSessionAsked() throws Exception {
        twoSessions();
        // waitP99Nanos unless asked: ties by session then thread, a row without the value last; whole-session rows unless asked
        assertEquals(List.of("web01/4", "web02/4", "web01/11", "web01/8", "web01/1", "web02/5"), rows(get("/api/threads", Map.of())));
        assertEquals(List.of("web01/8", "web01/11", "web02/4", "web01/1", "web01/4", "web02/5"),
                rows(get("/api/threads", Map.of("by", "readyCount"))));
        // pages: offset then top, the last one short, past the end empty
        assertEquals(List.of("web01/4", "web02/4"), rows(get("/api/threads", Map.of("top", "2"))));
        assertEquals(List.of("web01/11", "web01/8"), rows(get("/api/threads", Map.of("top", "2", "offset", "2"))));
        assertEquals(List.of("web01/1", "web02/5"), rows(get("/api/threads", Map.of("top", "3", "offset", "4"))));
        assertEquals(List.of(), rows(get("/api/threads", Map.of("offset", "6"))));
        assertEquals(List.of("web02/4", "web02/5"), rows(get("/api/threads", Map.of("session", WEB02))));
        // windows: the latest kept (of the session asked for, or of all), or every one
        assertEquals(List.of("web01/11@14", "web01/4@14"), rows(get("/api/threads", Map.of("window", "latest"))));
        assertEquals(List.of("web02/4@13"), rows(get("/api/threads", Map.of("window", "latest", "session", WEB02))));
        assertEquals(List.of("web02/4@13", "web01/11@14", "web01/4@14", "web01/4@13"), rows(get("/api/threads", Map.of("window", "all"))));
        assertEquals(List.of("web01/4@14"), rows(get("/api/threads", Map.of("window", "all", "by", "waitP99Nanos", "top", "1",
                "offset", "2"))));
        // the instances' own question (local=1): the same rows, up to offset + top of a page merged elsewhere
        assertEquals(rows(get("/api/threads", Map.of())), rows(get("/api/threads", Map.of("local", "1", "top", "10000"))));
    }

    @Test
    void aSessionWithoutRowsHasNoneAndAnUnknownSessionIsA404() throws Exception {
        twoSessions();
        record(WEB03, null, List.of());
        assertTrue(get("/api/threads", Map.of("session", WEB03)).isEmpty(), "known by its record: no row yet");
        assertTrue(get("/api/threads", Map.of("session", WEB03, "window", "latest")).isEmpty());
        StageHttp.HttpProblem p = refused("/api/threads", Map.of("session", "web09:NT Kernel Logger:1"));
        assertEquals(404, p.status);
        assertEquals("no session web09:NT Kernel Logger:1", p.getMessage());
        // no row anywhere: empty, not an error
        stats.clear();
        AggregateQueryState.close(indexes, "0_0", task0);
        AggregateQueryState.close(indexes, "0_1", task1);
        assertTrue(get("/api/threads", Map.of()).isEmpty());
        assertTrue(get("/api/threads", Map.of("window", "latest")).isEmpty());
    }

    /** A row's readiers, most first (ties by thread), each with its process's name where the session's thread records give it. */
    @Test
    void aRowNamesItsReadiersMostFirst() throws Exception {
        twoSessions();
        JsonNode row = get("/api/threads", Map.of("session", WEB01, "top", "1")).get(0);
        assertEquals(4, row.path("threadId").asInt());
        List<String> by = new ArrayList<>();
        for (JsonNode r : row.path("readiedBy")) by.add(r.path("threadId").asInt() + " " + r.path("processName").asText("?") + " " + r.path("count"));
        assertEquals(List.of("11 app.exe 9", "8 svc.exe 5", "99 ? 5"), by);
        assertTrue(row.path("readiedBy").get(2).has("processName") && row.path("readiedBy").get(2).path("processName").isNull(), row.toString());
        assertTrue(row.path("waitSketch").isNull() || row.path("waitSketch").isMissingNode(), "no sketch bytes: " + row);
    }

    /** A row's JSON is made once and kept, until the row changes: then the answer is the new row's. */
    @Test
    void aRowThatChangesIsAnsweredAnew() throws Exception {
        twoSessions();
        assertEquals(300, get("/api/threads", Map.of("top", "1")).get(0).path("waitP99Nanos").asLong());
        assertEquals(300, get("/api/threads", Map.of("top", "1")).get(0).path("waitP99Nanos").asLong(), "kept");
        whole(task0, WEB01, 4, T13 - 5 * MINUTE, 900L, 1, Map.of());
        JsonNode top = get("/api/threads", Map.of("top", "1")).get(0);
        assertEquals(900, top.path("waitP99Nanos").asLong());
        assertTrue(top.path("readiedBy").isEmpty(), top.toString());
    }

    /** An answer's ETag is the version of the instance's rows: a client that holds it gets a 304 until a row changes. */
    @Test
    void anAnswerIsNotModifiedUntilARowChanges() throws Exception {
        twoSessions();
        StageHttp.Response first = answer("/api/threads", Map.of("by", "readyCount"), null);
        assertEquals(200, first.status());
        String etag = first.etag();
        assertTrue(etag != null && etag.startsWith("W/\""), etag);
        StageHttp.Response again = answer("/api/threads", Map.of("by", "readyCount"), etag);
        assertEquals(304, again.status());
        assertEquals(0, again.body().length);
        assertEquals(etag, again.etag());
        // a row put: the answer is made again, under another ETag
        window(task1, WEB02, 5, T14, 70);
        StageHttp.Response changed = answer("/api/threads", Map.of("by", "readyCount"), etag);
        assertEquals(200, changed.status());
        assertNotEquals(etag, changed.etag());
        // a task leaving this instance: its rows are no longer answered here, under another ETag still
        AggregateQueryState.close(indexes, "0_1", task1);
        StageHttp.Response gone = answer("/api/threads", Map.of("by", "readyCount"), changed.etag());
        assertEquals(200, gone.status());
        assertEquals(List.of("web01/8", "web01/11", "web01/1", "web01/4"), rows(RecordJson.MAPPER.readTree(gone.body())));
        // another instance's ETag, or this one's of an earlier run: not this answer's
        assertEquals(200, answer("/api/threads", Map.of(), "W/\"0-" + indexes.version() + "\"").status());
    }

    /** One thread: its whole-session row, its kept windows oldest first, and whether earlier windows left the store. */
    @Test
    void aThreadIsItsWholeRowAndItsWindowsOldestFirst() throws Exception {
        twoSessions();
        JsonNode t = get("/api/threads/" + WEB01 + "/4", Map.of());
        assertEquals(300, t.path("whole").path("waitP99Nanos").asLong());
        assertEquals("svc.exe", t.path("whole").path("readiedBy").get(1).path("processName").asText(), t.toString());
        assertEquals(List.of("web01/4@13", "web01/4@14"), rows(t.path("windows")));
        assertEquals(SwapstreamConfig.DEFAULT_KEEP_WINDOWS, t.path("windowsKept").asInt());
        assertTrue(t.path("earlierWindowsDropped").asBoolean(), "it ran before 00:13, the session's oldest window kept: " + t);
        // a thread that began within the windows kept lost none; thread 1's windows are not thread 11's
        JsonNode eleven = get("/api/threads/" + WEB01 + "/11", Map.of());
        assertEquals(List.of("web01/11@14"), rows(eleven.path("windows")));
        assertFalse(eleven.path("earlierWindowsDropped").asBoolean(), eleven.toString());
        JsonNode one = get("/api/threads/" + WEB01 + "/1", Map.of());
        assertTrue(one.path("windows").isEmpty(), one.toString());
        assertEquals(1, one.path("whole").path("threadId").asInt());
        // a thread with windows only (its whole-session row not written yet)
        window(task1, WEB02, 6, T13, 80);
        JsonNode six = get("/api/threads/" + WEB02 + "/6", Map.of());
        assertTrue(six.path("whole").isNull(), six.toString());
        assertFalse(six.path("earlierWindowsDropped").asBoolean());
        assertEquals(List.of("web02/6@13"), rows(six.path("windows")));
        // the stage's --keep-windows, said
        api.keeping(3);
        assertEquals(3, get("/api/threads/" + WEB01 + "/4", Map.of()).path("windowsKept").asInt());
    }

    @Test
    void anUnknownThreadOrSessionIsA404AndABadPathA400() throws Exception {
        twoSessions();
        record(WEB03, null, List.of());
        Map<String, String> none = Map.of();
        assertEquals("404 no thread 9 in session " + WEB01, status(refused("/api/threads/" + WEB01 + "/9", none)));
        assertEquals("404 no thread 4 in session " + WEB03, status(refused("/api/threads/" + WEB03 + "/4", none)), "known by its record");
        assertEquals("404 no session nope", status(refused("/api/threads/nope/4", none)));
        // an instance asked for its own rows: what it has, none here
        assertTrue(get("/api/threads/nope/4", Map.of("local", "1")).isEmpty());
        assertEquals("400 TID: 'x' is not a thread id", status(refused("/api/threads/" + WEB01 + "/x", none)));
        assertEquals("400 TID: '99999999999' is not a thread id", status(refused("/api/threads/" + WEB01 + "/99999999999", none)));
        assertEquals("400 expected /api/threads/SESSION/TID", status(refused("/api/threads/" + WEB01, none)));
        assertEquals("400 expected /api/threads/SESSION/TID", status(refused("/api/threads/" + WEB01 + "/4/5", none)));
        assertEquals("400 unknown parameter 'window'; this route takes none",
                status(refused("/api/threads/" + WEB01 + "/4", Map.of("window", "all"))));
        assertEquals("404 no such resource: /api/thread", status(refused("/api/thread", none)));
    }

    static String status(StageHttp.HttpProblem p) {
        return p.status + " " + p.getMessage();
    }

    @Test
    void badParametersAreA400ThatSaysWhy() {
        twoSessions();
        Map<Map<String, String>, String> bad = new java.util.LinkedHashMap<>();
        bad.put(Map.of("sort", "readyCount"), "unknown parameter 'sort'; this route takes by, offset, session, top, window");
        bad.put(Map.of("session", ""), "session: empty; leave it out for every session");
        bad.put(Map.of("by", "session"), "by: 'session' is not one of " + ThreadStatsFields.SORTABLE);
        bad.put(Map.of("by", "readycount"), "by: 'readycount' is not one of " + ThreadStatsFields.SORTABLE);
        bad.put(Map.of("window", "each"), "window: 'each' is not one of none, latest, all");
        for (String top : List.of("0", "-1", "1001", "1e3", " 5", "99999999999")) {
            bad.put(Map.of("top", top), "top: '" + top + "' is not a whole number from 1 to 1000 (more a page at a time, with offset)");
        }
        bad.put(Map.of("offset", "9981"), "offset: '9981' is not a whole number from 0 to 9980 (offset + top at most 10000)");
        bad.put(Map.of("offset", "9001", "top", "1000"), "offset: '9001' is not a whole number from 0 to 9000 (offset + top at most 10000)");
        bad.put(Map.of("offset", "-1"), "offset: '-1' is not a whole number from 0 to 9980 (offset + top at most 10000)");
        bad.forEach((q, why) -> assertEquals("400 " + why, status(refused("/api/threads", q)), q.toString()));
        assertEquals("400 unknown parameter 'top'; this route takes none", status(refused("/api/sessions", Map.of("top", "5"))));
    }

    @Test
    void sessionsSayWhatEachHasCountedAndLost() throws Exception {
        assertTrue(get("/api/sessions", Map.of()).isEmpty(), "none yet");
        twoSessions();
        record(WEB03, "lost", List.of("events lost", "buffers lost"));
        progress.put(WEB01, AggregateQueryState.progress("web01", 1234, 9, true, "end of file"));
        progress.put(WEB02, AggregateQueryState.progress("web02", 17, 2, false, null));
        JsonNode all = get("/api/sessions", Map.of());
        assertEquals(3, all.size(), all.toString());
        Map<String, JsonNode> by = new HashMap<>();
        all.forEach(n -> by.put(n.path("session").asText(), n));
        JsonNode one = by.get(WEB01);
        assertEquals("web01", one.path("host").asText());
        assertEquals("NT Kernel Logger", one.path("logger").asText());
        assertEquals(T13 - 5 * MINUTE, one.path("startTimeNanos").asLong());
        assertTrue(one.path("complete").asBoolean());
        assertEquals("end of file", one.path("endReason").asText());
        assertEquals(1234, one.path("switchCount").asLong());
        assertEquals(3, one.path("eventsLost").asLong());
        assertEquals(1234, one.path("switchesCounted").asLong());
        assertEquals(4, one.path("threads").asInt(), "threads with a whole-session row, each once");
        assertEquals(9, one.path("threadRecords").asLong());
        assertTrue(one.path("final").asBoolean());
        // live: complete not known yet
        JsonNode two = by.get(WEB02);
        assertTrue(two.path("complete").isNull() && two.has("complete"), two.toString());
        assertTrue(two.path("endReason").isNull());
        assertEquals(2, two.path("threads").asInt());
        assertFalse(two.path("final").asBoolean());
        // ended with losses, nothing counted here yet
        JsonNode three = by.get(WEB03);
        assertFalse(three.path("complete").asBoolean());
        assertEquals(List.of("events lost", "buffers lost"), List.of(three.path("lossReasons").get(0).asText(),
                three.path("lossReasons").get(1).asText()));
        assertFalse(three.has("switchesCounted") || three.has("final"), three.toString());
        assertEquals(all, get("/api/sessions", Map.of("local", "1")), "the instance's own: the same, alone");
    }

    @Test
    void storesNotQueryableAreA503ToAskAgain() {
        twoSessions();
        queryable = false;
        String why = "503 the statistics are not queryable right now (REBALANCING): ask again";
        assertEquals(why, status(refused("/api/sessions", Map.of())));
        assertEquals(why, status(refused("/api/threads", Map.of())), "rows whose JSON is not made yet");
        assertEquals(why, status(refused("/api/threads/" + WEB01 + "/4", Map.of())));
    }

    /**
     * Over HTTP on loopback: names from the traces (a session id, a process name) come back as data in JSON, never as markup;
     * refusals (a parameter given twice, unknown or bad, a session unknown) in the one error shape; a held ETag a 304.
     */
    @Test
    void overHttpNamesAreDataAndEveryRefusalIsTheErrorShape() throws Exception {
        // a session id holds no '/' (the decode stage refuses one), anything else it may
        String evil = "<img src=x onerror=alert(\"s\")> 100% web:NT Kernel Logger:1";
        whole(task0, evil, 4, T13, 300L, 1, Map.of("5", 2L));
        label(evil, 5, "</script><img src=x onerror=alert(1)>");
        record(evil, null, List.of());
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        try (StageHttp server = StageHttp.bind("127.0.0.1:0")) {
            server.route("/api/", api::answer);
            server.start();
            String base = "http://127.0.0.1:" + server.port();
            String inPath = URLEncoder.encode(evil, StandardCharsets.UTF_8).replace("+", "%20");
            String inQuery = URLEncoder.encode(evil, StandardCharsets.UTF_8);

            HttpResponse<String> list = send(client, base + "/api/threads?session=" + inQuery, null);
            assertEquals(200, list.statusCode(), list.body());
            assertJson(list);
            JsonNode row = RecordJson.MAPPER.readTree(list.body()).get(0);
            assertEquals(evil, row.path("session").asText());
            assertEquals("</script><img src=x onerror=alert(1)>", row.path("readiedBy").get(0).path("processName").asText());

            HttpResponse<String> thread = send(client, base + "/api/threads/" + inPath + "/4", null);
            assertEquals(200, thread.statusCode(), thread.body());
            assertEquals(evil, RecordJson.MAPPER.readTree(thread.body()).path("whole").path("session").asText());
            HttpResponse<String> sessions = send(client, base + "/api/sessions", null);
            assertEquals(evil, RecordJson.MAPPER.readTree(sessions.body()).get(0).path("session").asText());

            HttpResponse<String> noThread = send(client, base + "/api/threads/" + inPath + "/9", null);
            assertEquals(404, noThread.statusCode());
            assertEquals("no thread 9 in session " + evil, error(noThread));
            HttpResponse<String> noSession = send(client, base + "/api/threads?session=%3Cb%3Enope", null);
            assertEquals(404, noSession.statusCode());
            assertEquals("no session <b>nope", error(noSession));
            for (String q : List.of("top=10&top=20", "sort=readyCount", "by=%3Cb%3E", "top=0", "window=each", "session=")) {
                HttpResponse<String> r = send(client, base + "/api/threads?" + q, null);
                assertEquals(400, r.statusCode(), q + ": " + r.body());
                assertFalse(error(r).isBlank(), q);
            }
            HttpResponse<String> unknownPath = send(client, base + "/api/nothing", null);
            assertEquals(404, unknownPath.statusCode());
            assertEquals("no such resource: /api/nothing", error(unknownPath));

            String etag = list.headers().firstValue("ETag").orElse(null);
            assertNotNull(etag);
            HttpResponse<String> held = send(client, base + "/api/threads?session=" + inQuery, etag);
            assertEquals(304, held.statusCode());
            assertEquals("", held.body());
            // the one thread's answer has no version of its own: an ETag of its bytes
            String threadTag = thread.headers().firstValue("ETag").orElse(null);
            assertNotNull(threadTag);
            assertEquals(304, send(client, base + "/api/threads/" + inPath + "/4", threadTag).statusCode());
        }
    }

    static HttpResponse<String> send(HttpClient client, String uri, String ifNoneMatch) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(30)).GET();
        if (ifNoneMatch != null) b.header("If-None-Match", ifNoneMatch);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static void assertJson(HttpResponse<String> r) {
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.headers().toString());
        assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(null));
    }

    /** The one error shape, {@code {"error": "..."}}: its message. */
    static String error(HttpResponse<String> r) throws Exception {
        assertJson(r);
        JsonNode n = RecordJson.MAPPER.readTree(r.body());
        assertTrue(n.isObject() && n.size() == 1 && n.path("error").isTextual(), r.body());
        return n.path("error").asText();
    }
}
