package io.swapstream.http;

import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.streams.KafkaStreams;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.URIUtil;

/**
 * A stage's HTTP side, on Jetty's core server (no framework: a few read-only routes):
 * {@code /health}, {@code /metrics}, and on the aggregate the query API and the live page.
 * A route is matched exactly, or, when it ends in {@code /}, by prefix; the path is decoded once.
 */
public final class StageHttp implements AutoCloseable {
    /** A route's answer. */
    public record Response(int status, String contentType, byte[] body, String etag, Body stream) {
        public Response(int status, String contentType, byte[] body, String etag) {
            this(status, contentType, body, etag, null);
        }

        Response(int status, String contentType, byte[] body) {
            this(status, contentType, body, null);
        }

        /** A 200 whose body is written as it is made (an .etl file of any size), with no length known ahead. */
        public static Response streamed(String contentType, Body stream) {
            return new Response(200, contentType, null, null, stream);
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

    /** A body written as it is made; a failure half-way ends the connection, the client sees a short file. */
    public interface Body {
        /** The name a browser saves it under. */
        String fileName();

        void writeTo(java.io.OutputStream out) throws java.io.IOException;
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

    record Routed(String prefix, Route route, boolean open, java.util.function.Function<Throwable, String> describe) {
        boolean matches(String path) {
            return prefix.endsWith("/") ? path.startsWith(prefix) : path.equals(prefix);
        }
    }

    /** How long {@link #close} waits for the server to stop. */
    static final java.time.Duration STOP_BOUND = java.time.Duration.ofSeconds(10);

    private final Server server;
    private final ServerConnector connector;
    private final InetSocketAddress bound;
    private final List<Routed> routes = new CopyOnWriteArrayList<>();
    /** One line for a client about an unexpected failure: the command line's own wording, given by the stage runner. */
    private java.util.function.Function<Throwable, String> describe =
            e -> "internal error, please report it (SWAPSTREAM_DEBUG=1 prints the details)";
    private final HttpTls tls;
    final HttpUsers users;
    /** Whether a route takes every path no other route does; if none does, {@link #start} adds one that answers 404 in JSON. */
    private boolean rootRouted;

    private StageHttp(Server server, ServerConnector connector, InetSocketAddress bound, HttpTls tls, HttpUsers users) {
        this.server = server;
        this.connector = connector;
        this.bound = bound;
        this.tls = tls;
        this.users = users;
    }

    /** Binds now (port 0: any free port), so that the address is known before Kafka Streams starts; plain HTTP, open to all. */
    public static StageHttp bind(String hostPort) throws IOException {
        return bind(hostPort, null, null);
    }

    /** As {@link #bind(String, HttpTls, HttpUsers, boolean)}, refusing users over plain HTTP beyond loopback. */
    public static StageHttp bind(String hostPort, HttpTls tls, HttpUsers users) throws IOException {
        return bind(hostPort, tls, users, false);
    }

    /**
     * Binds now, serving HTTPS when {@code tls} is given, and asking for a user of {@code users} (basic
     * authentication) on every route but {@code /health} when given.
     *
     * @param usersInClear whether users may log in over plain HTTP beyond loopback (--http-users-in-clear); if not,
     *                     such a stage is an {@link IllegalArgumentException}, before anything is bound
     */
    public static StageHttp bind(String hostPort, HttpTls tls, HttpUsers users, boolean usersInClear) throws IOException {
        return bind(hostPort, tls, users, usersInClear, BoundedServer.FIRST_REQUEST_TIMEOUT);
    }

    static StageHttp bind(String hostPort, HttpTls tls, HttpUsers users, boolean usersInClear, java.time.Duration firstRequestTimeout)
            throws IOException {
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        InetSocketAddress address = new InetSocketAddress(host, port);
        refuseUsersInClear(hostPort, tls, users, usersInClear);

        ServerConnector connector = BoundedServer.bind(host, port, tls, firstRequestTimeout);
        Server server = connector.getServer();
        StageHttp stage = new StageHttp(server, connector, new InetSocketAddress(address.getAddress(), connector.getLocalPort()), tls, users);
        server.setHandler(new StageDispatch(stage));
        return stage;
    }

    /**
     * Refuses users over plain HTTP bound beyond loopback (every interface included) unless {@code allowed}: their
     * passwords would cross the network in clear. An {@link IllegalArgumentException}, one line.
     */
    public static void refuseUsersInClear(String hostPort, HttpTls tls, HttpUsers users, boolean allowed) {
        if (users == null || tls != null || allowed) return;
        String host = hostPort.substring(0, hostPort.lastIndexOf(':'));
        InetSocketAddress address = new InetSocketAddress(host, 0);
        if (address.getAddress() != null && address.getAddress().isLoopbackAddress()) return;
        throw new IllegalArgumentException("--http " + hostPort + ": --http-users over plain HTTP beyond loopback would send passwords"
                + " in clear; add --http-tls KEYSTORE (or --http-users-in-clear to accept it)");
    }

    /** What is exposed, bound beyond loopback: null when bound to loopback, or with both TLS and users. */
    public String exposure() {
        var a = bound.getAddress();
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
        String host = bound.getHostString();
        if (bound.getAddress() != null && bound.getAddress().isAnyLocalAddress()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                host = "localhost";
            }
        }
        return host + ":" + bound.getPort();
    }

    public int port() {
        return connector.getLocalPort();
    }

    /** The connections open now, finished requests or not. */
    int connections() {
        return connector.getConnectedEndPoints().size();
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

    /** Answers {@code path} exactly, or every path under it when it ends in {@code /}. */
    public StageHttp route(String path, Route route) {
        if (path.equals("/")) rootRouted = true;
        // /health says only whether the stage runs: probes need no password
        routes.add(new Routed(path, route, path.equals("/health"), describe));
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
        // a stage without a page of its own: / lists what it serves; any other unknown path gets the one error shape
        if (!rootRouted) {
            List<String> served = routes.stream().map(Routed::prefix).sorted().toList();
            route("/", request -> {
                if (!request.path().equals("/")) throw new HttpProblem(404, "no such resource: " + request.path());
                allowOnly(request.query(), List.of());
                var index = RecordJson.MAPPER.createObjectNode();
                served.forEach(index.putArray("routes")::add);
                return Response.json(200, index.toString());
            });
        }
        try {
            server.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start HTTP on " + address() + ": " + e.getMessage(), e);
        }
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

    /** The path, decoded once; null when it has a dot segment (nothing here is reached through one). */
    static String decodedPath(String rawPath) {
        if (rawPath == null || rawPath.isEmpty()) return "/";
        for (String segment : rawPath.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) return null;
        }
        return URIUtil.decodePath(rawPath);
    }

    /** The route for {@code path}: the longest that matches. */
    Routed routeFor(String path) {
        Routed best = null;
        for (Routed r : routes) {
            if (r.matches(path) && (best == null || r.prefix().length() > best.prefix().length())) best = r;
        }
        return best;
    }

    /** What every route takes: they only read. */
    static final String ALLOWED_METHODS = "GET, HEAD";

    /**
     * The query's parameters, decoded; a parameter given twice ({@code top=10&top=20}) is a 400: which one was meant is
     * not for the server to guess.
     */
    static Map<String, String> query(String raw) {
        Map<String, String> m = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) return m;
        for (String part : raw.split("&")) {
            if (part.isEmpty()) continue; // a=1&&b=2
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            if (m.putIfAbsent(k, v) != null) throw new HttpProblem(400, "parameter '" + k + "' is given more than once; give it once");
        }
        return m;
    }

    /**
     * Stops the server, waiting at most {@link #STOP_BOUND}. Jetty 12.1.13's stop can wait for ever on a connection it
     * is closing (seen once in CI: the selector parked in {@code HttpConnection$SendCallback$CancelSendException.join});
     * a stage that is stopping does not wait on it: the port is freed and the request threads, daemons, end with the process.
     */
    @Override
    public void close() {
        Thread stopper = new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                // stopping: nothing more to do with it
            }
        }, "swapstream-http-stop");
        stopper.setDaemon(true);
        stopper.start();
        try {
            stopper.join(STOP_BOUND.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopper.isAlive()) {
            org.slf4j.LoggerFactory.getLogger(StageHttp.class).warn("HTTP server on {} did not stop within {} s: its port is closed,"
                    + " its open connections end with the process", bound, STOP_BOUND.toSeconds());
            connector.close();
        }
    }
}
