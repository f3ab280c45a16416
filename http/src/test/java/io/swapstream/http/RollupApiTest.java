package io.swapstream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.json.RecordJson;
import java.util.Map;
import java.util.TreeMap;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * The rollup stage's query API over stores in memory, one instance: what a fleet page asks for (issue 58).
 */
class RollupApiTest {
    static final long MINUTE = 60_000_000_000L;
    /** 00:13 and 00:15 of a day: the roll-ups have closed 00:13; wake edges of 00:15 came in, its window still open. */
    static final long T13 = 1_764_288_780_000_000_000L;
    static final long T15 = T13 + 2 * MINUTE;

    final TreeMap<String, Object> processRows = new TreeMap<>();
    final TreeMap<String, Object> hostRows = new TreeMap<>();
    final TreeMap<String, Object> wakeEdges = new TreeMap<>();
    final RollupApi api = new RollupApi(name -> new MapStore(switch (name) {
        case RollupTopology.PROCESS_ROWS_STORE -> processRows;
        case RollupTopology.HOST_ROWS_STORE -> hostRows;
        case RollupTopology.WAKE_EDGES_STORE -> wakeEdges;
        default -> throw new IllegalArgumentException(name);
    }), () -> "RUNNING", new Peers(null, "127.0.0.1:8082", "http", null), "http://127.0.0.1:8080/");

    JsonNode get(String path, Map<String, String> query) throws Exception {
        StageHttp.Response r = api.answer(new StageHttp.Request(path, query));
        assertEquals(200, r.status(), new String(r.body()));
        return RecordJson.MAPPER.readTree(r.body());
    }

    void process(String name, long window, String host) {
        processRows.put(RollupTopology.storeKey(name, window), ProcessStats.newBuilder().setProcessName(name).setWindowStartNanos(window)
                .setWindowEndNanos(window + MINUTE).setHosts(1).setSessions(1).setThreads(3).setSwitchInCount(10).setWaitCount(5)
                .setWaitSumNanos(1000).setReadyCount(5).setReadySumNanos(500).setRunSumNanos(2000).build());
        hostRows.put(RollupTopology.storeKey(host, window), HostStats.newBuilder().setHost(host).setWindowStartNanos(window)
                .setWindowEndNanos(window + MINUTE).setSessions(1).setProcesses(1).setThreads(3).setSwitchInCount(10).setRunSumNanos(2000)
                .setReadyCount(5).setReadySumNanos(500).build());
    }

    void edge(String waker, String woken, long window, String host, long count) {
        WakeEdge e = WakeEdge.newBuilder().setWakerProcess(waker).setWokenProcess(woken).setHost(host).setSession(host + " s")
                .setWindowStartNanos(window).setWindowEndNanos(window + MINUTE).setWakeCount(count).setWaitSumNanos(count * 100)
                .setReadyCount(count).setReadySumNanos(count * 10).build();
        wakeEdges.put(RollupTopology.windowKey(window) + "/" + waker + "\0" + woken + "\0" + e.getSession(), e);
    }

    /**
     * Item 5: /api/wakes by default answered for the newest window of any edge, 00:15, which /api/windows did not list (its
     * roll-ups not closed yet), so the fleet page's panel under a row of 00:13 spoke of 00:15. Its default is now the latest
     * window /api/windows lists that has edges of the process; a window asked for is that window.
     */
    @Test
    void wakesByDefaultAreOfTheLatestWindowTheWindowsList() throws Exception {
        process("app.exe", T13 - MINUTE, "web01");
        process("app.exe", T13, "web01");
        edge("svc.exe", "app.exe", T13 - MINUTE, "web01", 3);
        edge("svc.exe", "app.exe", T13, "web01", 7);
        edge("app.exe", "db.exe", T13, "web01", 2);
        edge("svc.exe", "app.exe", T15, "web01", 11); // its window still open: no roll-up row yet
        JsonNode windows = get("/api/windows", Map.of());
        assertEquals(T13, windows.get(0).path("windowStartNanos").asLong(), "the newest window listed: " + windows);
        JsonNode latest = get("/api/wakes", Map.of("process", "app.exe"));
        assertEquals(T13, latest.path("windowStartNanos").asLong(), "a window /api/windows lists, not a newer one: " + latest);
        assertEquals(7, latest.path("wakers").get(0).path("wakeCount").asLong(), latest.toString());
        assertEquals("db.exe", latest.path("wakes").get(0).path("wokenProcess").asText(), latest.toString());
        for (JsonNode e : latest.path("wakers")) assertEquals(T13, e.path("windowStartNanos").asLong());
        // the window of a row, asked for: that one
        JsonNode older = get("/api/wakes", Map.of("process", "app.exe", "window", String.valueOf(T13 - MINUTE)));
        assertEquals(T13 - MINUTE, older.path("windowStartNanos").asLong());
        assertEquals(3, older.path("wakers").get(0).path("wakeCount").asLong());
        assertTrue(older.path("wakes").isEmpty(), older.toString());
        // a process without edges in the newest listed window: its latest listed one that has some
        process("db.exe", T13, "web02");
        edge("svc.exe", "cron.exe", T13 - MINUTE, "web01", 4);
        JsonNode cron = get("/api/wakes", Map.of("process", "cron.exe"));
        assertEquals(T13 - MINUTE, cron.path("windowStartNanos").asLong(), cron.toString());
        // every window: all of them, the open one too
        JsonNode all = get("/api/wakes", Map.of("process", "app.exe", "window", "all"));
        assertEquals(3, all.path("wakers").size(), all.toString());
    }

    @Test
    void noWindowListedYetIsNoEdgesAndNoWindow() throws Exception {
        edge("svc.exe", "app.exe", T15, "web01", 11);
        JsonNode w = get("/api/wakes", Map.of("process", "app.exe"));
        assertTrue(w.path("windowStartNanos").isNull(), w.toString());
        assertTrue(w.path("wakers").isEmpty() && w.path("wakes").isEmpty(), w.toString());
    }
}
