package io.swapstream.http;

import io.swapstream.aggregate.WakeEdges;
import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.schemas.RecordFields;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.json.RecordJson;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The rollup stage's query API: {@code /api/processes} and {@code /api/hosts} (the top groups of the latest
 * closed window, of a chosen one, each group's latest, or every kept window; {@code /api/windows} lists them) and {@code /api/processes/NAME}, {@code /api/hosts/HOST} (a group's
 * windows), and {@code /api/wakes?process=NAME} (who wakes it, whom it wakes). A group's windows live on one instance (partitioned by name); a list asks every instance for its
 * own top N and merges. Sketch bytes are left out unless {@code sketches=true}.
 */
public final class RollupApi {
    private static final ObjectMapper JSON = RecordJson.MAPPER;

    /** One kind of roll-up: its path, store, name field and numeric fields. */
    private record Kind(String path, String store, String nameField, Schema schema, List<String> sortable) {}

    private static final Kind PROCESSES = new Kind("/api/processes", RollupTopology.PROCESS_ROWS_STORE, "processName",
            ProcessStats.SCHEMA$, RecordFields.numeric(ProcessStats.SCHEMA$));
    private static final Kind HOSTS = new Kind("/api/hosts", RollupTopology.HOST_ROWS_STORE, "host", HostStats.SCHEMA$,
            RecordFields.numeric(HostStats.SCHEMA$));

    /** This instance's query stores by name; an {@link InvalidStateStoreException} while they are not queryable. */
    private final java.util.function.Function<String, ReadOnlyKeyValueStore<String, ?>> stores;
    /** The stage's state, for a client told to ask again. */
    private final java.util.function.Supplier<String> state;
    private final Peers peers;
    private final String aggregatePage;

    /** @param aggregatePage where the fleet page sends a click on a host: the aggregate's page */
    public RollupApi(KafkaStreams streams, Peers peers, String aggregatePage) {
        this(name -> streams.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.keyValueStore())),
                () -> String.valueOf(streams.state()), peers, aggregatePage);
    }

    /** Over stores given by name (a test's, in memory). */
    RollupApi(java.util.function.Function<String, ReadOnlyKeyValueStore<String, ?>> stores, java.util.function.Supplier<String> state,
              Peers peers, String aggregatePage) {
        this.stores = stores;
        this.state = state;
        this.peers = peers;
        this.aggregatePage = aggregatePage;
    }

    /** This instance's store {@code name}; a 503 (ask again) while it is not queryable. */
    @SuppressWarnings("unchecked")
    private <V> ReadOnlyKeyValueStore<String, V> store(String name, String what) {
        try {
            return (ReadOnlyKeyValueStore<String, V>) stores.apply(name);
        } catch (InvalidStateStoreException e) {
            throw new StageHttp.HttpProblem(503, "the " + what + " are not queryable right now (" + state.get() + "): ask again");
        }
    }

    public StageHttp.Response answer(StageHttp.Request request) throws Exception {
        String path = request.path();
        if (path.equals("/api/windows")) return windows(request);
        if (path.equals("/api/wakes")) return wakes(request);
        if (path.equals("/api/fleet-config")) {
            StageHttp.allowOnly(request.query(), List.of());
            return StageHttp.Response.json(200, JSON.writeValueAsString(Map.of("aggregatePage", aggregatePage)));
        }
        for (Kind kind : List.of(PROCESSES, HOSTS)) {
            if (path.equals(kind.path())) return list(kind, request);
            if (path.startsWith(kind.path() + "/")) return one(kind, path.substring(kind.path().length() + 1), request);
        }
        throw new StageHttp.HttpProblem(404, "no such resource: " + path);
    }

    /** The top groups of the latest window (or of every kept window), by a numeric field. */
    private StageHttp.Response list(Kind kind, StageHttp.Request request) throws Exception {
        Map<String, String> q = request.query();
        StageHttp.allowOnly(q, List.of("by", "window", "top", "offset", "sketches"));
        String by = q.getOrDefault("by", "readyP99Nanos");
        if (!kind.sortable().contains(by)) throw new StageHttp.HttpProblem(400, "by: '" + by + "' is not one of " + kind.sortable());
        String window = q.getOrDefault("window", "latest");
        if (!window.equals("latest") && !window.equals("each") && !window.equals("all") && !isWindowStart(window)) {
            throw new StageHttp.HttpProblem(400, "window: '" + window + "' is not latest, each, all, or a window's start (ns, as /api/windows"
                    + " lists them)");
        }
        int top = StatsApi.top(q);
        int offset = StatsApi.offset(q, top);
        boolean sketches = bool(q, "sketches");
        List<JsonNode> rows = new ArrayList<>();
        if (q.containsKey("local")) {
            rows.addAll(local(kind, null, sketches));
        } else {
            Map<String, String> lq = StatsApi.firstRows(q, offset, top);
            for (String host : peers.all()) {
                if (peers.isSelf(host)) rows.addAll(local(kind, null, sketches));
                else peers.ask(host, kind.path(), lq, request.authorization()).forEach(rows::add);
            }
        }
        if (window.equals("each")) {
            // each group's own latest window: hosts minutes apart all show
            Map<String, JsonNode> latest = new HashMap<>();
            for (JsonNode n : rows) {
                latest.merge(n.path(kind.nameField()).asText(""), n,
                        (a, b) -> b.path("windowStartNanos").asLong() > a.path("windowStartNanos").asLong() ? b : a);
            }
            rows = new ArrayList<>(latest.values());
        } else if (!window.equals("all")) {
            long chosen = window.equals("latest") ? rows.stream().mapToLong(n -> n.path("windowStartNanos").asLong()).max().orElse(0)
                    : Long.parseLong(window);
            rows.removeIf(n -> n.path("windowStartNanos").asLong() != chosen);
        }
        rows.sort(Comparator.comparingDouble((JsonNode n) -> n.path(by).isNumber() ? -n.path(by).asDouble() : Double.POSITIVE_INFINITY)
                .thenComparing(n -> -n.path("windowStartNanos").asLong()).thenComparing(n -> n.path(kind.nameField()).asText()));
        ArrayNode out = JSON.createArrayNode();
        rows.stream().skip(offset).limit(top).forEach(out::add);
        return StageHttp.Response.json(200, JSON.writeValueAsString(out));
    }

    /** The windows whose roll-ups are kept, newest first, each with its end, and how many process and host rows it has. */
    private StageHttp.Response windows(StageHttp.Request request) throws Exception {
        StageHttp.allowOnly(request.query(), List.of());
        List<JsonNode> rows = request.query().containsKey("local") ? windowsHere() : windowsEverywhere(request.authorization());
        java.util.TreeMap<Long, long[]> byStart = new java.util.TreeMap<>(java.util.Comparator.reverseOrder());
        for (JsonNode n : rows) {
            long[] w = byStart.computeIfAbsent(n.path("windowStartNanos").asLong(), k -> new long[3]);
            w[0] = n.path("windowEndNanos").asLong();
            w[1] += n.path("processes").asLong();
            w[2] += n.path("hosts").asLong();
        }
        ArrayNode out = JSON.createArrayNode();
        byStart.forEach((start, w) -> out.addObject().put("windowStartNanos", start).put("windowEndNanos", w[0]).put("processes", w[1])
                .put("hosts", w[2]));
        return StageHttp.Response.json(200, JSON.writeValueAsString(out));
    }

    /** Every instance's kept windows, each instance's own list. */
    private List<JsonNode> windowsEverywhere(String authorization) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        for (String host : peers.all()) {
            if (peers.isSelf(host)) rows.addAll(windowsHere());
            else peers.ask(host, "/api/windows", Map.of("local", "1"), authorization).forEach(rows::add);
        }
        return rows;
    }

    /** This instance's kept windows: per window, its end and its rows of each kind. */
    private List<JsonNode> windowsHere() throws Exception {
        java.util.TreeMap<Long, long[]> byStart = new java.util.TreeMap<>();
        for (Kind kind : List.of(PROCESSES, HOSTS)) {
            for (JsonNode n : local(kind, null, false)) {
                long[] w = byStart.computeIfAbsent(n.path("windowStartNanos").asLong(), k -> new long[3]);
                w[0] = n.path("windowEndNanos").asLong();
                w[kind == PROCESSES ? 1 : 2]++;
            }
        }
        List<JsonNode> out = new ArrayList<>();
        byStart.forEach((start, w) -> out.add(JSON.createObjectNode().put("windowStartNanos", start).put("windowEndNanos", w[0])
                .put("processes", w[1]).put("hosts", w[2])));
        return out;
    }

    /** One group's kept windows, oldest first (the empty name: threads of no known process). */
    private StageHttp.Response one(Kind kind, String name, StageHttp.Request request) throws Exception {
        StageHttp.allowOnly(request.query(), List.of("sketches"));
        boolean sketches = bool(request.query(), "sketches");
        List<JsonNode> windows;
        if (request.query().containsKey("local")) {
            windows = local(kind, name, sketches);
        } else {
            String owner = peers.owner(kind.store(), name, kind.nameField() + " " + name);
            if (peers.isSelf(owner)) {
                windows = local(kind, name, sketches);
            } else {
                Map<String, String> lq = new HashMap<>(request.query());
                lq.put("local", "1");
                windows = new ArrayList<>();
                ArrayNode a = peers.ask(owner, request.path(), lq, request.authorization());
                if (a.size() == 1 && a.get(0).has("windows")) a.get(0).path("windows").forEach(windows::add);
            }
        }
        if (windows.isEmpty()) {
            throw new StageHttp.HttpProblem(404, "no " + (kind == PROCESSES ? "process" : "host") + " " + (name.isEmpty() ? "(unknown)" : name)
                    + " in the kept windows");
        }
        ObjectNode n = JSON.createObjectNode();
        if (name.isEmpty()) n.putNull(kind.nameField());
        else n.put(kind.nameField(), name);
        n.set("windows", JSON.valueToTree(windows));
        return StageHttp.Response.json(200, JSON.writeValueAsString(n));
    }

    /** This instance's rows: of {@code name} only when given; oldest window first. */
    private List<JsonNode> local(Kind kind, String name, boolean sketches) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        ReadOnlyKeyValueStore<String, SpecificRecordBase> store = store(kind.store(), "roll-ups");
        try (KeyValueIterator<String, SpecificRecordBase> it = store.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                if (name != null && !kv.key.substring(kv.key.indexOf('/') + 1).equals(name)) continue;
                ObjectNode row = RecordJson.toTree(kv.value);
                if (!sketches) {
                    withoutSketches(row);
                    if (row.path("added").isObject()) withoutSketches((ObjectNode) row.get("added"));
                }
                out.add(row);
            }
        }
        return out;
    }

    private static void withoutSketches(ObjectNode row) {
        List<String> sketches = new ArrayList<>();
        row.fieldNames().forEachRemaining(f -> { if (f.endsWith("Sketch")) sketches.add(f); });
        row.remove(sketches);
    }

    /**
     * Who woke whom: a process's wakers (edges it is woken by) and the processes it wakes, in the latest
     * window that has any (or the one asked for, or every kept one), fleet-wide or of one host: each
     * host's records of an edge merged. An edge's records all live on one instance; a question goes to every one.
     * The latest is of the windows {@code /api/windows} lists (whose roll-ups have closed): edges of a window still
     * open come in before its roll-ups, and a page showing a row of the latest closed window would otherwise
     * speak of a newer minute than the row.
     */
    private StageHttp.Response wakes(StageHttp.Request request) throws Exception {
        Map<String, String> q = request.query();
        StageHttp.allowOnly(q, List.of("process", "window", "host", "top"));
        String process = q.get("process");
        if (process == null || process.isEmpty()) throw new StageHttp.HttpProblem(400, "process: required (an image name, or (interrupt))");
        String window = q.getOrDefault("window", "latest");
        if (!window.equals("latest") && !window.equals("all") && !isWindowStart(window)) {
            throw new StageHttp.HttpProblem(400, "window: '" + window + "' is not latest, all, or a window's start (ns)");
        }
        String host = q.get("host");
        int top = StatsApi.top(q);
        List<JsonNode> edges = new ArrayList<>();
        if (q.containsKey("local")) {
            edges.addAll(wakesHere(process, window, host));
            return StageHttp.Response.json(200, JSON.writeValueAsString(JSON.valueToTree(edges)));
        }
        // the latest: every instance's edges of every window, then the newest window listed that has any
        String asked = window.equals("latest") ? "all" : window;
        Map<String, String> lq = new HashMap<>(q);
        lq.put("window", asked);
        lq.put("local", "1");
        for (String peer : peers.all()) {
            if (peers.isSelf(peer)) edges.addAll(wakesHere(process, asked, host));
            else peers.ask(peer, "/api/wakes", lq, request.authorization()).forEach(edges::add);
        }
        Long chosen = null;
        if (window.equals("latest")) {
            java.util.Set<Long> listed = new java.util.HashSet<>();
            for (JsonNode w : windowsEverywhere(request.authorization())) listed.add(w.path("windowStartNanos").asLong());
            chosen = edges.stream().map(n -> n.path("windowStartNanos").asLong()).filter(listed::contains).max(Long::compare).orElse(null);
            long w = chosen == null ? Long.MIN_VALUE : chosen;
            edges.removeIf(n -> n.path("windowStartNanos").asLong() != w);
        } else if (!window.equals("all")) {
            chosen = Long.parseLong(window);
        }
        Comparator<JsonNode> most = Comparator.comparingLong((JsonNode n) -> -n.path("wakeCount").asLong())
                .thenComparing(n -> -n.path("windowStartNanos").asLong())
                .thenComparing(n -> n.path("wakerProcess").asText()).thenComparing(n -> n.path("wokenProcess").asText());
        ObjectNode out = JSON.createObjectNode();
        out.put("process", process);
        if (chosen == null) out.putNull("windowStartNanos");
        else out.put("windowStartNanos", chosen);
        if (host == null) out.putNull("host");
        else out.put("host", host);
        ArrayNode wakers = out.putArray("wakers");
        edges.stream().filter(n -> n.path("wokenProcess").asText().equals(process)).sorted(most).limit(top).forEach(wakers::add);
        ArrayNode woken = out.putArray("wakes");
        edges.stream().filter(n -> n.path("wakerProcess").asText().equals(process)).sorted(most).limit(top).forEach(woken::add);
        return StageHttp.Response.json(200, JSON.writeValueAsString(out));
    }

    /**
     * This instance's edges of {@code process} (as waker or woken) in its latest window that has any, the one
     * given, or all: each host's and session's records of an edge and window merged, with how many hosts.
     */
    private List<JsonNode> wakesHere(String process, String window, String host) {
        ReadOnlyKeyValueStore<String, WakeEdge> store = store(RollupTopology.WAKE_EDGES_STORE, "wake edges");
        Map<String, WakeEdge> merged = new java.util.LinkedHashMap<>();
        Map<String, java.util.Set<String>> hosts = new HashMap<>();
        try (KeyValueIterator<String, WakeEdge> it = window.matches("[0-9]+")
                ? store.range(RollupTopology.windowKey(Long.parseLong(window)) + "/", RollupTopology.windowKey(Long.parseLong(window)) + "0")
                : store.all()) {
            while (it.hasNext()) {
                WakeEdge e = it.next().value;
                String waker = e.getWakerProcess().toString();
                String woken = e.getWokenProcess().toString();
                if (!waker.equals(process) && !woken.equals(process)) continue;
                if (host != null && !host.equals(e.getHost().toString())) continue;
                String key = e.getWindowStartNanos() + "\0" + waker + "\0" + woken;
                WakeEdge had = merged.get(key);
                if (had == null) merged.put(key, WakeEdge.newBuilder(e).build());
                else WakeEdges.merge(had, e);
                hosts.computeIfAbsent(key, k -> new java.util.HashSet<>()).add(e.getHost().toString());
            }
        }
        long latest = merged.values().stream().mapToLong(WakeEdge::getWindowStartNanos).max().orElse(0);
        List<JsonNode> out = new ArrayList<>();
        merged.forEach((key, e) -> {
            if (window.equals("latest") && e.getWindowStartNanos() != latest) return;
            ObjectNode n = RecordJson.toTree(e);
            withoutSketches(n);
            n.remove(List.of("host", "session"));
            n.put("hosts", hosts.get(key).size());
            out.add(n);
        });
        return out;
    }

    /** A window's start as /api/windows lists it: nanoseconds, a long. */
    private static boolean isWindowStart(String window) {
        if (!window.matches("[0-9]{1,19}")) return false;
        try {
            Long.parseLong(window);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static boolean bool(Map<String, String> q, String name) {
        String v = q.getOrDefault(name, "false");
        if (!v.equals("true") && !v.equals("false")) throw new StageHttp.HttpProblem(400, name + ": '" + v + "' is not true or false");
        return v.equals("true");
    }
}
