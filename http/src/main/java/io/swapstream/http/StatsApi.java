package io.swapstream.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.swapstream.aggregate.RowIndex;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.streams.AggregateTopology;
import io.swapstream.aggregate.streams.RowIndexes;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The aggregate's query API. A session's rows live with its partition, on one instance: a request for
 * a session goes to the instance Kafka Streams names as its owner; a request over all sessions asks
 * every instance for its own top N ({@code local=1}) and merges. An instance answers a top N from its
 * tasks' {@link RowIndexes}, not by a scan of its store, with an ETag from their version: a client that
 * holds the answer gets a 304 until a row changes.
 */
public final class StatsApi {
    static final ObjectMapper JSON = RecordJson.MAPPER;
    /** This instance's query stores by name; an {@link InvalidStateStoreException} while they are not queryable. */
    private final java.util.function.Function<String, ReadOnlyKeyValueStore<String, ?>> stores;
    /** The stage's state, for a client told to ask again. */
    private final java.util.function.Supplier<String> state;
    private final RowIndexes indexes;
    /** Closed windows per session the stats store keeps (the aggregate's --keep-windows). */
    private int keepWindows = io.swapstream.schemas.SwapstreamConfig.DEFAULT_KEEP_WINDOWS;
    /** Tells this instance's ETags from an earlier run's. */
    private final String started = Long.toHexString(System.currentTimeMillis());
    private final Peers peers;

    public StatsApi(KafkaStreams streams, RowIndexes indexes, String self) {
        this(streams, indexes, self, "http", null);
    }

    /** @param tls the stage's TLS settings (its peers are asked over HTTPS, trusting its key store), or null */
    public StatsApi(KafkaStreams streams, RowIndexes indexes, String self, String scheme, HttpTls tls) {
        this(name -> streams.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.keyValueStore())),
                () -> String.valueOf(streams.state()), indexes, new Peers(streams, self, scheme, tls));
    }

    /** Over stores given by name (a test's, in memory). */
    StatsApi(java.util.function.Function<String, ReadOnlyKeyValueStore<String, ?>> stores, java.util.function.Supplier<String> state,
             RowIndexes indexes, Peers peers) {
        this.stores = stores;
        this.state = state;
        this.indexes = indexes;
        this.peers = peers;
    }

    /** The closed windows per session the stage keeps: a thread's answer says so when it had more. */
    public StatsApi keeping(int windows) {
        this.keepWindows = windows;
        return this;
    }

    /** The route: a request's path and query, and the ETag the client holds. */
    public StageHttp.Response answer(StageHttp.Request request) throws Exception {
        return answer(request.path(), request.query(), request.ifNoneMatch(), request.authorization());
    }

    /** @param authorization the client's credentials, passed on to the instances asked in turn */
    private StageHttp.Response answer(String path, Map<String, String> q, String ifNoneMatch, String authorization) throws Exception {
        boolean local = q.containsKey("local");
        if (path.equals("/api/sessions")) {
            StageHttp.allowOnly(q, List.of());
            return StageHttp.Response.json(200, JSON.writeValueAsString(local ? localSessions() : everywhere(path, q, authorization)));
        }
        if (path.equals("/api/threads")) {
            StageHttp.allowOnly(q, List.of("session", "by", "top", "offset", "window"));
            String session = q.get("session");
            if (session != null && session.isEmpty()) throw new StageHttp.HttpProblem(400, "session: empty; leave it out for every session");
            String by = q.getOrDefault("by", "waitP99Nanos");
            if (!ThreadStatsFields.SORTABLE.contains(by)) {
                throw new StageHttp.HttpProblem(400, "by: '" + by + "' is not one of " + ThreadStatsFields.SORTABLE);
            }
            int top = top(q);
            int offset = offset(q, top);
            String window = q.getOrDefault("window", "none");
            RowIndex.Rows rows = switch (window) {
                case "none" -> RowIndex.Rows.WHOLE;
                case "latest" -> RowIndex.Rows.LATEST;
                case "all" -> RowIndex.Rows.ALL;
                default -> throw new StageHttp.HttpProblem(400, "window: '" + window + "' is not one of none, latest, all");
            };
            // the owner of the session, asked once: this instance, or the one the request goes on to
            String owner = local || session == null ? null : peers.owner(AggregateTopology.STATS_STORE, session, "session " + session);
            boolean here = local || (session != null ? peers.isSelf(owner) : alone());
            if (here) {
                // answered from this instance's rows alone: its version says whether anything changed
                String etag = etag();
                if (etag.equals(ifNoneMatch)) return StageHttp.Response.notModified(etag);
                if (session != null && !indexes.hasSession(session) && !knownHere(session)) {
                    throw new StageHttp.HttpProblem(404, "no session " + session);
                }
                return StageHttp.Response.json(200, localTop(by, offset, top, session, rows), etag);
            }
            Map<String, String> first = firstRows(q, offset, top);
            ArrayNode merged = session != null ? peers.ask(owner, path, first, authorization) : everywhere(path, first, authorization);
            if (rows == RowIndex.Rows.LATEST) merged = latestWindowOnly(merged);
            return StageHttp.Response.json(200, JSON.writeValueAsString(ranked(merged, by, offset, top)));
        }
        if (path.startsWith("/api/threads/")) {
            StageHttp.allowOnly(q, List.of());
            String[] parts = path.substring("/api/threads/".length()).split("/");
            if (parts.length != 2) throw new StageHttp.HttpProblem(400, "expected /api/threads/SESSION/TID");
            // the path came decoded, once: a second decoding would turn a '%' in a session id into an error
            String session = parts[0];
            int tid;
            try {
                tid = Integer.parseInt(parts[1]);
            } catch (NumberFormatException e) {
                throw new StageHttp.HttpProblem(400, "TID: '" + parts[1] + "' is not a thread id");
            }
            if (!local) {
                ArrayNode a = owner(session, path, q, authorization);
                if (a.size() == 0) throw new StageHttp.HttpProblem(404, sessionKnown(session, authorization) ? "no thread " + tid + " in session " + session
                        : "no session " + session);
                return StageHttp.Response.json(200, JSON.writeValueAsString(a.get(0)));
            }
            ObjectNode one = localThread(session, tid);
            ArrayNode a = JSON.createArrayNode();
            if (one != null) a.add(one);
            return StageHttp.Response.json(200, JSON.writeValueAsString(a));
        }
        throw new StageHttp.HttpProblem(404, "no such resource: " + path);
    }

    /** Rows an answer holds at most; more come a page at a time, with {@code offset}. */
    public static final int MAX_TOP = 1000;
    /**
     * How deep {@code offset} pages: offset + top at most. A merged answer asks every instance for that many rows and
     * ranks them in memory, so this bounds what one request costs.
     */
    public static final int MAX_RANKED = 10_000;

    /**
     * {@code top}: how many rows, 20 unless asked, at most {@link #MAX_TOP}; an instance asked for its own rows
     * ({@code local}) gives up to {@link #MAX_RANKED}, the first offset + top of a page merged elsewhere.
     */
    static int top(Map<String, String> q) {
        return count(q, "top", 20, 1, q.containsKey("local") ? MAX_RANKED : MAX_TOP, " (more a page at a time, with offset)");
    }

    /** The query asked of each instance for a page: its own first offset + top rows, among which the page is. */
    static Map<String, String> firstRows(Map<String, String> q, int offset, int top) {
        Map<String, String> lq = new HashMap<>(q);
        lq.remove("offset");
        lq.put("top", String.valueOf(offset + top));
        lq.put("local", "1");
        return lq;
    }

    /** {@code offset}: how many of the ranked rows to skip, 0 unless asked; with {@code top}, at most {@link #MAX_RANKED}. */
    static int offset(Map<String, String> q, int top) {
        return count(q, "offset", 0, 0, MAX_RANKED - top, " (offset + top at most " + MAX_RANKED + ")");
    }

    /** A whole number from {@code min} to {@code max}; anything else is a 400 that says so. */
    static int count(Map<String, String> q, String name, int dflt, int min, int max, String why) {
        String v = q.get(name);
        if (v == null) return dflt;
        if (v.matches("[0-9]{1,9}")) {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) return n;
        }
        throw new StageHttp.HttpProblem(400, name + ": '" + v + "' is not a whole number from " + min + " to " + max + why);
    }

    /** The ETag of this instance's answers: its start and the version of its rows. */
    private String etag() {
        return "W/\"" + started + "-" + indexes.version() + "\"";
    }

    private boolean alone() {
        return peers.alone();
    }

    /** True when an instance of the stage knows the session: this one's store, or the owner's answer to the sessions route. */
    private boolean sessionKnown(String session, String authorization) throws Exception {
        String owner = peers.owner(AggregateTopology.STATS_STORE, session, "session " + session);
        if (peers.isSelf(owner)) return indexes.hasSession(session) || knownHere(session);
        for (JsonNode n : peers.ask(owner, "/api/sessions", Map.of("local", "1"), authorization)) {
            if (n.path("session").asText().equals(session)) return true;
        }
        return false;
    }

    /** True when this instance has the session's record (a session may have no row yet). */
    private boolean knownHere(String session) {
        return this.<TraceSession>store(AggregateTopology.SESSION_RECORDS_STORE).get(session) != null;
    }

    /** This instance's top rows as a JSON array: each row's JSON made once and kept until the row changes. */
    private byte[] localTop(String by, int offset, int top, String session, RowIndex.Rows rows) {
        List<RowIndex.Hit> ranked = indexes.top(by, offset + top, session, rows);
        List<RowIndex.Hit> hits = ranked.subList(Math.min(offset, ranked.size()), ranked.size());
        // the stores only when a row's JSON must be made: finding a store costs more than a cached answer
        ReadOnlyKeyValueStore<String, ThreadStats> stats = null;
        ReadOnlyKeyValueStore<String, io.swapstream.schemas.avro.ThreadInfo> labels = null;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(256 + hits.size() * 1024);
        out.write('[');
        boolean first = true;
        for (RowIndex.Hit h : hits) {
            byte[] json = h.json();
            if (json == null) {
                if (stats == null) {
                    stats = store(AggregateTopology.STATS_STORE);
                    labels = store(AggregateTopology.THREADS_STORE);
                }
                ThreadStats row = stats.get(h.storeKey());
                if (row == null) continue; // removed since it was selected
                json = withReadiers(RecordJson.toTree(row), labels).toString().getBytes(StandardCharsets.UTF_8);
                h.keepJson(json);
            }
            if (!first) out.write(',');
            out.writeBytes(json);
            first = false;
        }
        out.write(']');
        return out.toByteArray();
    }

    /** Each instance's latest window: the fleet's is the latest of them. */
    private static ArrayNode latestWindowOnly(ArrayNode rows) {
        long latest = Long.MIN_VALUE;
        for (JsonNode n : rows) latest = Math.max(latest, n.path("windowStartNanos").asLong());
        ArrayNode out = JSON.createArrayNode();
        for (JsonNode n : rows) if (n.path("windowStartNanos").asLong() == latest) out.add(n);
        return out;
    }

    static ArrayNode ranked(ArrayNode rows, String by, int offset, int top) {
        List<JsonNode> l = new ArrayList<>();
        rows.forEach(l::add);
        l.sort(Comparator.comparingDouble((JsonNode n) -> n.path(by).asDouble(Double.NEGATIVE_INFINITY)).reversed()
                .thenComparing(n -> n.path("session").asText()).thenComparingInt(n -> n.path("threadId").asInt())
                .thenComparingLong(n -> n.path("windowStartNanos").asLong()));
        ArrayNode out = JSON.createArrayNode();
        l.stream().skip(offset).limit(top).forEach(out::add);
        return out;
    }

    /** The answer of the instance that holds {@code session}: this one, or the owner over HTTP. */
    private ArrayNode owner(String session, String path, Map<String, String> q, String authorization) throws Exception {
        String host = peers.owner(AggregateTopology.STATS_STORE, session, "session " + session);
        Map<String, String> lq = local(q);
        if (!peers.isSelf(host)) return peers.ask(host, path, lq, authorization);
        ArrayNode a = JSON.createArrayNode();
        JsonNode n = JSON.readTree(answer(path, lq, null, authorization).body());
        if (n.isArray()) a.addAll((ArrayNode) n);
        else a.add(n);
        return a;
    }

    /** The query as asked of another instance: for its own rows. */
    private static Map<String, String> local(Map<String, String> q) {
        Map<String, String> lq = new HashMap<>(q);
        lq.put("local", "1");
        return lq;
    }

    /** Every instance's own rows, merged. */
    private ArrayNode everywhere(String path, Map<String, String> q, String authorization) throws Exception {
        Map<String, String> lq = local(q);
        ArrayNode all = JSON.createArrayNode();
        for (String host : peers.all()) {
            all.addAll(peers.isSelf(host) ? (ArrayNode) JSON.readTree(answer(path, lq, null, authorization).body())
                    : peers.ask(host, path, lq, authorization));
        }
        return all;
    }

    @SuppressWarnings("unchecked")
    private <V> ReadOnlyKeyValueStore<String, V> store(String name) {
        try {
            return (ReadOnlyKeyValueStore<String, V>) stores.apply(name);
        } catch (InvalidStateStoreException e) {
            throw new StageHttp.HttpProblem(503, "the statistics are not queryable right now (" + state.get() + "): ask again");
        }
    }

    private ArrayNode localSessions() throws IOException {
        ReadOnlyKeyValueStore<String, TraceSession> records = store(AggregateTopology.SESSION_RECORDS_STORE);
        ReadOnlyKeyValueStore<String, byte[]> progress = store(AggregateTopology.SESSIONS_STORE);
        ArrayNode out = JSON.createArrayNode();
        try (KeyValueIterator<String, TraceSession> it = records.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                TraceSession t = kv.value;
                ObjectNode n = out.addObject();
                n.put("session", kv.key);
                n.put("host", str(t.getHost()));
                n.put("logger", str(t.getLoggerName()));
                n.put("startTimeNanos", t.getStartTimeNanos());
                n.put("endTimeNanos", t.getEndTimeNanos());
                // complete is known once the session has ended
                if (t.getEndReason() == null) n.putNull("complete");
                else n.put("complete", t.getComplete());
                n.put("endReason", str(t.getEndReason()));
                n.put("switchCount", t.getSwitchCount());
                n.put("deadLetters", t.getDeadLetters());
                n.put("eventsLost", t.getEventsLost());
                n.put("switchesOutOfOrder", t.getSwitchesOutOfOrder());
                n.put("maxLatenessNanos", t.getMaxLatenessNanos());
                ArrayNode reasons = n.putArray("lossReasons");
                if (t.getLossReasons() != null) t.getLossReasons().forEach(r -> reasons.add(r.toString()));
                byte[] p = progress.get(kv.key);
                if (p != null) {
                    AggregateTopology.SessionProgress s = AggregateTopology.progress(p);
                    n.put("switchesCounted", s.switches());
                    // each thread once (a thread has several records on etw.threads: its start, rundown, end)
                    n.put("threads", indexes.threads(kv.key));
                    n.put("threadRecords", s.threads());
                    n.put("final", s.done());
                }
            }
        }
        return out;
    }

    /**
     * A row with {@code readiedBy}: its top readiers, most first, each with its process's name where the session's
     * thread records give it (written with the accumulators: a thread seen in the last moments may have none yet).
     */
    static ObjectNode withReadiers(ObjectNode row, ReadOnlyKeyValueStore<String, io.swapstream.schemas.avro.ThreadInfo> labels) {
        List<Map.Entry<String, JsonNode>> top = new ArrayList<>(row.path("topReadiers").properties());
        top.sort(Comparator.comparingLong((Map.Entry<String, JsonNode> e) -> -e.getValue().asLong())
                .thenComparingLong(e -> Long.parseLong(e.getKey())));
        ArrayNode by = row.putArray("readiedBy");
        String session = row.path("session").asText();
        for (Map.Entry<String, JsonNode> e : top) {
            io.swapstream.schemas.avro.ThreadInfo t = labels.get(session + "/" + e.getKey());
            ObjectNode r = by.addObject().put("threadId", Integer.parseInt(e.getKey()));
            if (t == null || t.getProcessName() == null) r.putNull("processName");
            else r.put("processName", t.getProcessName().toString());
            r.put("count", e.getValue().asLong());
        }
        return row;
    }

    private static String str(CharSequence c) {
        return c == null ? null : c.toString();
    }

    /** The start of the session's oldest window in the store; Long.MAX_VALUE when none. */
    private static long oldestWindowKept(ReadOnlyKeyValueStore<String, ThreadStats> stats, String session) {
        try (KeyValueIterator<String, ThreadStats> it = stats.prefixScan(session + "/w/", new StringSerializer())) {
            return it.hasNext() ? it.next().value.getWindowStartNanos() : Long.MAX_VALUE;
        }
    }

    /** One thread's whole-session row with its kept windows, oldest first; null when it has none. */
    private ObjectNode localThread(String session, int tid) throws IOException {
        ReadOnlyKeyValueStore<String, ThreadStats> stats = store(AggregateTopology.STATS_STORE);
        ReadOnlyKeyValueStore<String, io.swapstream.schemas.avro.ThreadInfo> labels = store(AggregateTopology.THREADS_STORE);
        ThreadStats whole = stats.get(ThreadStatsFields.key(session, tid, null));
        ArrayNode windows = JSON.createArrayNode();
        String suffix = "/" + tid;
        try (KeyValueIterator<String, ThreadStats> it = stats.prefixScan(session + "/w/", new StringSerializer())) {
            while (it.hasNext()) {
                var kv = it.next();
                if (kv.key.endsWith(suffix)) windows.add(withReadiers(RecordJson.toTree(kv.value), labels));
            }
        }
        if (whole == null && windows.isEmpty()) return null;
        ObjectNode n = JSON.createObjectNode();
        n.set("whole", whole == null ? null : withReadiers(RecordJson.toTree(whole), labels));
        n.set("windows", windows);
        // the thread ran before the oldest window kept: its earlier windows left the store (the topic has them)
        long oldestKept = oldestWindowKept(stats, session);
        n.put("windowsKept", keepWindows);
        n.put("earlierWindowsDropped", whole != null && oldestKept != Long.MAX_VALUE && whole.getWindowStartNanos() < oldestKept);
        return n;
    }
}
