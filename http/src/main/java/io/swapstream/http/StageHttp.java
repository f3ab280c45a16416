package io.swapstream.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A stage's HTTP side, on the JDK's own server (no framework: a few read-only routes):
 * {@code /health}, {@code /metrics}, and on the aggregate the query API and the live page.
 */
public final class StageHttp implements AutoCloseable {
    /** A route's answer. */
    public record Response(int status, String contentType, byte[] body, String etag) {
        Response(int status, String contentType, byte[] body) {
            this(status, contentType, body, null);
        }

        /** The one error shape: {@code {"error": "..."}}. */
        public static Response error(int status, String message) {
            return json(status, RecordJson.MAPPER.createObjectNode().put("error", message == null ? "" : message).toString());
        }

        static Response json(int status, String json) {
            return json(status, json.getBytes(StandardCharsets.UTF_8), null);
        }

        static Response json(int status, byte[] json, String etag) {
            return new Response(status, "application/json", json, etag);
        }

        static Response text(int status, String text) {
            return new Response(status, "text/plain; charset=utf-8", (text + "\n").getBytes(StandardCharsets.UTF_8));
        }

        /** Nothing changed since the answer the client holds, tagged {@code etag}. */
        static Response notModified(String etag) {
            return new Response(304, "application/json", new byte[0], etag);
        }
    }

    /** A bad request: its message is the one line the client gets with a 400 (or 404). */
    public static final class HttpProblem extends RuntimeException {
        final int status;

        HttpProblem(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /** A request: its decoded path and query, the ETag the client holds (If-None-Match), its credentials and the formats it takes. */
    public record Request(String path, Map<String, String> query, String ifNoneMatch, String authorization, String accept) {
        Request(String path, Map<String, String> query) {
            this(path, query, null, null, null);
        }

        public Request(String path, Map<String, String> query, String ifNoneMatch, String authorization) {
            this(path, query, ifNoneMatch, authorization, null);
        }
    }

    @FunctionalInterface
    public interface Route {
        Response answer(Request request) throws Exception;
    }

    static {
        // without TCP_NODELAY a kept-alive connection's answer waits for the client's delayed ACK, tens of ms a
        // request; read once, when the JDK's server is first used
        if (System.getProperty("sun.net.httpserver.nodelay") == null) System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private final HttpServer server;
    /** One line for a client about an unexpected failure: the command line's own wording, given by the stage runner. */
    private java.util.function.Function<Throwable, String> describe =
            e -> "internal error, please report it (SWAPSTREAM_DEBUG=1 prints the details)";
    private final HttpTls tls;
    private final HttpUsers users;
    /** Whether a route takes every path no other route does; if none does, {@link #start} adds one that answers 404 in JSON. */
    private boolean rootRouted;

    private StageHttp(HttpServer server, HttpTls tls, HttpUsers users) {
        this.server = server;
        this.tls = tls;
        this.users = users;
    }

    /** Binds now (port 0: any free port), so that the address is known before Kafka Streams starts; plain HTTP, open to all. */
    public static StageHttp bind(String hostPort) throws IOException {
        return bind(hostPort, null, null);
    }

    /**
     * Binds now, serving HTTPS when {@code tls} is given, and asking for a user of {@code users} (basic
     * authentication) on every route but {@code /health} when given.
     */
    public static StageHttp bind(String hostPort, HttpTls tls, HttpUsers users) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        InetSocketAddress address = new InetSocketAddress(host, port);
        HttpServer server;
        if (tls != null) {
            HttpsServer https = HttpsServer.create(address, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls.server()));
            server = https;
        } else {
            server = HttpServer.create(address, 64);
        }
        server.setExecutor(Executors.newFixedThreadPool(8, r -> {
            Thread t = new Thread(r, "swapstream-http");
            t.setDaemon(true);
            return t;
        }));
        return new StageHttp(server, tls, users);
    }

    /** What is exposed, bound beyond loopback: null when bound to loopback, or with both TLS and users. */
    public String exposure() {
        var a = server.getAddress().getAddress();
        if (a == null || a.isLoopbackAddress()) return null;
        if (tls == null && users == null) return "anyone who reaches it reads it, in clear (--http-tls, --http-users)";
        if (tls == null) return "its passwords cross the network in clear (--http-tls)";
        if (users == null) return "anyone who reaches it reads it (--http-users)";
        return null;
    }

    public String scheme() {
        return tls == null ? "http" : "https";
    }

    /** The TLS settings, for requests to other instances; null for plain HTTP. */
    public HttpTls tls() {
        return tls;
    }

    /**
     * host:port as other instances reach this one: the bound address, or this machine's name when
     * bound to every interface (0.0.0.0 would send a peer to itself).
     */
    public String address() {
        InetSocketAddress a = server.getAddress();
        String host = a.getHostString();
        if (a.getAddress() != null && a.getAddress().isAnyLocalAddress()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                host = "localhost";
            }
        }
        return host + ":" + a.getPort();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code /health}: 200 while Kafka Streams is RUNNING, else 503; {@code /metrics}: Prometheus text, OpenMetrics or protobuf as asked. */
    public StageHttp standard(KafkaStreams streams, StageMetrics metrics) {
        route("/health", request -> {
            KafkaStreams.State s = streams.state();
            return Response.json(s == KafkaStreams.State.RUNNING ? 200 : 503,
                    RecordJson.MAPPER.createObjectNode().put("state", s.toString()).toString());
        });
        // Prometheus asks for protobuf when it takes native histograms, else for text
        route("/metrics", request -> new Response(200, StageMetrics.contentType(request.accept()), metrics.scrape(request.accept())));
        return this;
    }

    public StageHttp route(String prefix, Route route) {
        if (prefix.equals("/")) rootRouted = true;
        var context = server.createContext(prefix, exchange -> handle(exchange, route, describe));
        // /health says only whether the stage runs: probes need no password
        if (users != null && !prefix.equals("/health")) context.setAuthenticator(users);
        return this;
    }

    /** Files under {@code resourceDir} on the class path, {@code /} being index.html. */
    public StageHttp staticFiles(String resourceDir) {
        return route("/", request -> {
            String path = request.path();
            // a browser asks for /favicon.ico whatever the page says
            String name = path.equals("/") ? "index.html" : path.equals("/favicon.ico") ? "favicon.svg" : path.substring(1);
            if (name.contains("..") || name.contains("/")) throw new HttpProblem(404, "no such page: " + path);
            InputStream found = StageHttp.class.getResourceAsStream(resourceDir + "/" + name);
            // what both pages use (the chart) is kept once
            if (found == null) found = StageHttp.class.getResourceAsStream("/swapstream-common/" + name);
            try (InputStream in = found) {
                if (in == null) throw new HttpProblem(404, "no such page: " + path);
                String type = name.endsWith(".html") ? "text/html; charset=utf-8" : name.endsWith(".js")
                        ? "text/javascript; charset=utf-8" : name.endsWith(".css") ? "text/css; charset=utf-8"
                        : name.endsWith(".svg") ? "image/svg+xml" : "application/octet-stream";
                return new Response(200, type, in.readAllBytes());
            }
        });
    }

    /** Describes unexpected failures to clients with {@code describe}; for the routes added after this. */
    public StageHttp describingErrors(java.util.function.Function<Throwable, String> describe) {
        this.describe = describe;
        return this;
    }

    public void start() {
        // an unknown path gets the one error shape, as every other answer, not the JDK server's HTML page
        if (!rootRouted) route("/", request -> { throw new HttpProblem(404, "no such resource: " + request.path()); });
        server.start();
    }

    /** Refuses a parameter the route does not take (a misspelt one would otherwise be ignored); {@code local} is the instances' own. */
    public static void allowOnly(Map<String, String> query, java.util.Collection<String> names) {
        for (String k : query.keySet()) {
            if (!names.contains(k) && !k.equals("local")) {
                throw new HttpProblem(400, "unknown parameter '" + k + "'; this route takes " + (names.isEmpty() ? "none"
                        : String.join(", ", new java.util.TreeSet<>(names))));
            }
        }
    }

    /** A weak ETag of an answer's bytes, for answers that have no version of their own. */
    static String etagOf(byte[] body) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(body);
        return "W/\"" + Long.toHexString(crc.getValue()) + "-" + body.length + "\"";
    }

    private static void handle(HttpExchange exchange, Route route, java.util.function.Function<Throwable, String> describe) throws IOException {
        Response r;
        try {
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                r = Response.text(405, "only GET");
            } else {
                URI uri = exchange.getRequestURI();
                var h = exchange.getRequestHeaders();
                r = route.answer(new Request(uri.getPath(), query(uri.getRawQuery()), h.getFirst("If-None-Match"), h.getFirst("Authorization"),
                        h.getFirst("Accept")));
            }
        } catch (HttpProblem e) {
            r = Response.error(e.status, e.getMessage());
        } catch (Exception e) {
            r = Response.error(500, describe.apply(e));
        }
        // every JSON answer has an ETag: its version where it has one, else its bytes'; a client holding it gets a 304
        if (r.status() == 200 && r.etag() == null && r.contentType().startsWith("application/json")) {
            String etag = etagOf(r.body());
            r = etag.equals(exchange.getRequestHeaders().getFirst("If-None-Match")) ? Response.notModified(etag)
                    : new Response(200, r.contentType(), r.body(), etag);
        }
        exchange.getResponseHeaders().set("Content-Type", r.contentType());
        if (r.etag() != null) {
            // the client asks again each time (no-cache), and a 304 tells it its copy holds
            exchange.getResponseHeaders().set("ETag", r.etag());
            exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        } else {
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
        }
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(r.status(), head || r.status() == 304 ? -1 : r.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            if (!head && r.status() != 304) out.write(r.body());
        }
    }

    static Map<String, String> query(String raw) {
        Map<String, String> m = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) return m;
        for (String part : raw.split("&")) {
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            m.put(k, v);
        }
        return m;
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
