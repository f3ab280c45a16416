package io.swapstream.http;

import static io.swapstream.http.StageHttpSecurityTest.basic;
import static io.swapstream.http.StageHttpSecurityTest.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.json.RecordJson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a few hostile sockets and clients can do to a stage's HTTP side (issue 52): nothing that stops {@code /health}.
 * Every wait is for an event, with a generous bound; nothing here is timed.
 */
@Timeout(120)
class StageHttpHardeningTest {
    /** Far more than any step here takes, even on two loaded cores. */
    static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir Path dir;

    @Test
    void eightUnfinishedRequestsLeaveHealthAnswering() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0")); Stalled stalled = new Stalled()) {
            for (int i = 0; i < 8; i++) stalled.open(server.port(), "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ".getBytes(StandardCharsets.US_ASCII));
            // the server holds all eight, each waiting for the rest of its request
            await(() -> server.connections() >= 8, "the eight connections accepted");
            HttpResponse<String> r = get(client(), "http://127.0.0.1:" + server.port() + "/health", null);
            assertEquals(200, r.statusCode());
        }
    }

    /**
     * A client that sends a header byte now and then is never idle for long, and would hold its socket for ever; its
     * first request has a deadline (a second here; the connection is closed for it, not for idling: 30 s away).
     */
    @Test
    void aTricklingRequestIsClosedAtItsDeadline() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0", null, null, false, Duration.ofSeconds(1)));
             Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(200);
            OutputStream out = s.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
            long until = System.nanoTime() + BOUND.toNanos();
            boolean closed = false;
            while (!closed && System.nanoTime() < until) {
                try {
                    out.write('X');
                    closed = s.getInputStream().read() < 0;
                } catch (java.net.SocketTimeoutException e) {
                    // nothing yet: another byte
                } catch (IOException e) {
                    closed = true;
                }
            }
            assertTrue(closed, "closed before its request came whole");
            assertEquals(200, get(client(), "http://127.0.0.1:" + server.port() + "/health", null).statusCode());
        }
    }

    @Test
    void eightStalledTlsHandshakesLeaveHealthAnsweringOverHttps() throws Exception {
        HttpTls tls = tls();
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0", tls, null)); Stalled stalled = new Stalled()) {
            // the first five bytes of a ClientHello: a handshake record's header, its body never sent
            byte[] recordHeader = {0x16, 0x03, 0x01, 0x02, 0x00};
            for (int i = 0; i < 8; i++) stalled.open(server.port(), recordHeader);
            await(() -> server.connections() >= 8, "the eight connections accepted");
            HttpClient https = HttpClient.newBuilder().sslContext(tls.client()).connectTimeout(BOUND).build();
            assertEquals(200, get(https, "https://127.0.0.1:" + server.port() + "/health", null).statusCode());
        }
    }

    @Test
    void aHugeHeaderIsRefusedAndTheServerGoesOn() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0"))) {
            String big = "a".repeat(4 * BoundedServer.MAX_HEADER_BYTES);
            String answer;
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.setSoTimeout((int) BOUND.toMillis());
                try {
                    s.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + big + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    answer = new String(readAll(s.getInputStream()), StandardCharsets.ISO_8859_1);
                } catch (java.net.SocketException e) {
                    // closed on it before it was all sent or read: refused too, just less politely
                    answer = "reset";
                }
            }
            assertTrue(answer.startsWith("HTTP/1.1 431") || answer.equals("reset") || answer.isEmpty(), answer);
            if (answer.startsWith("HTTP/1.1 431")) assertTrue(answer.toLowerCase().contains("x-content-type-options: nosniff"), answer);
            assertEquals(200, get(client(), "http://127.0.0.1:" + server.port() + "/health", null).statusCode());
        }
    }

    @Test
    void failedLoginsMakeTheAddressAndTheNameWait() throws Exception {
        MutableClock clock = new MutableClock();
        HttpUsers users = users("ana", "s3cret").withClock(clock);
        for (int i = 0; i < HttpUsers.FREE_FAILURES; i++) {
            assertEquals(new HttpUsers.Login(false, 0), users.login("192.0.2.1", basic("ana", "guess" + i)));
        }
        // from that address, any name, the right password too: not even checked
        assertTrue(users.login("192.0.2.1", basic("ana", "s3cret")).waitSeconds() > 0);
        assertTrue(users.login("192.0.2.1", basic("bob", "x")).waitSeconds() > 0);
        // that name, from anywhere
        assertTrue(users.login("192.0.2.2", basic("ana", "s3cret")).waitSeconds() > 0);
        // another name from another address is checked
        assertEquals(new HttpUsers.Login(false, 0), users.login("192.0.2.3", basic("eve", "x")));
        // each failure past the free ones doubles the wait
        clock.advance(Duration.ofSeconds(2));
        assertEquals(new HttpUsers.Login(false, 0), users.login("192.0.2.1", basic("ana", "another")));
        long waited = users.login("192.0.2.1", basic("ana", "s3cret")).waitSeconds();
        assertEquals(2, waited);
        clock.advance(Duration.ofSeconds(waited));
        assertEquals(new HttpUsers.Login(true, 0), users.login("192.0.2.1", basic("ana", "s3cret")));
        // a success clears both
        assertEquals(new HttpUsers.Login(false, 0), users.login("192.0.2.1", basic("ana", "wrong")));
        // never longer than the most
        for (int i = 0; i < 40; i++) {
            clock.advance(HttpUsers.MAX_WAIT);
            users.login("192.0.2.9", basic("zed", "x" + i));
        }
        assertTrue(users.login("192.0.2.9", basic("zed", "x")).waitSeconds() <= HttpUsers.MAX_WAIT.toSeconds());
    }

    @Test
    void theServerAnswersAWaitingLoginWith429() throws Exception {
        HttpUsers users = users("ana", "s3cret").withClock(new MutableClock());
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0", null, users))) {
            String uri = "http://127.0.0.1:" + server.port() + "/metrics";
            HttpClient client = client();
            for (int i = 0; i < HttpUsers.FREE_FAILURES; i++) assertEquals(401, get(client, uri, basic("ana", "no" + i)).statusCode());
            HttpResponse<String> waiting = get(client, uri, basic("ana", "s3cret"));
            assertEquals(429, waiting.statusCode());
            assertTrue(waiting.headers().firstValue("Retry-After").isPresent());
            assertTrue(RecordJson.MAPPER.readTree(waiting.body()).path("error").asText().contains("too many failed logins"));
            assertEquals(200, get(client, "http://127.0.0.1:" + server.port() + "/health", null).statusCode(), "probes never wait");
        }
    }

    @Test
    void anUnknownNameIsCheckedAgainstAHashAsAKnownOneIs() throws Exception {
        HttpUsers users = users("ana", "s3cret");
        assertFalse(users.checkCredentials("ana", "wrong"));
        assertEquals(0, users.dummyChecks(), "a known name is checked against its own hash");
        assertFalse(users.checkCredentials("nobody", "wrong"));
        assertEquals(1, users.dummyChecks(), "an unknown one against the made-up hash, at the same cost");
        // and both count alike towards waiting
        MutableClock clock = new MutableClock();
        HttpUsers timed = users.withClock(clock);
        List<HttpUsers.Login> known = new ArrayList<>();
        List<HttpUsers.Login> unknown = new ArrayList<>();
        for (int i = 0; i <= HttpUsers.FREE_FAILURES; i++) {
            known.add(timed.login("192.0.2." + (10 + i), basic("ana", "w" + i)));
            unknown.add(timed.login("192.0.2." + (30 + i), basic("nobody", "w" + i)));
        }
        assertEquals(known, unknown);
    }

    @Test
    void usersOverPlainHttpBeyondLoopbackAreRefusedUnlessAccepted() throws Exception {
        HttpUsers users = users("ana", "s3cret");
        for (String beyond : List.of("192.0.2.1:8080", "0.0.0.0:8080", "[::]:8080")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> StageHttp.refuseUsersInClear(beyond, null, users, false));
            assertTrue(e.getMessage().startsWith("--http " + beyond + ":") && e.getMessage().contains("--http-users-in-clear")
                    && !e.getMessage().contains("\n"), e.getMessage());
            // refused before anything is bound
            assertThrows(IllegalArgumentException.class, () -> StageHttp.bind(beyond, null, users));
            StageHttp.refuseUsersInClear(beyond, null, users, true);
            StageHttp.refuseUsersInClear(beyond, null, null, false);
        }
        StageHttp.refuseUsersInClear("127.0.0.1:8080", null, users, false);
        StageHttp.bind("127.0.0.1:0", null, users).close();
    }

    @Test
    void peersGetNoUsersCredentialsOverPlainHttpToAnotherMachine() throws Exception {
        Peers plain = new Peers(null, "127.0.0.1:8080", "http", null);
        StageHttp.HttpProblem refused = assertThrows(StageHttp.HttpProblem.class,
                () -> plain.ask("192.0.2.7:8080", "/api/sessions", Map.of("local", "1"), basic("ana", "s3cret")));
        assertEquals(503, refused.status);
        assertTrue(refused.getMessage().contains("not sent there in clear"), refused.getMessage());
        assertTrue(plain.mayForwardCredentials("127.0.0.1:8081"));
        assertTrue(plain.mayForwardCredentials("localhost:8081"));
        assertTrue(plain.mayForwardCredentials("[::1]:8081"));
        assertFalse(plain.mayForwardCredentials("web01:8081"));
        assertTrue(new Peers(null, "127.0.0.1:8080", "https", null).mayForwardCredentials("web01:8081"));
        // on this machine the credentials do go on: a peer that checks them lets the question in
        HttpUsers users = users("ana", "s3cret");
        try (StageHttp peer = StageHttp.bind("127.0.0.1:0", null, users)) {
            peer.route("/api/", r -> StageHttp.Response.json(200, "[{\"asked\":\"" + r.path() + "\"}]"));
            peer.start();
            var rows = plain.ask("127.0.0.1:" + peer.port(), "/api/sessions", Map.of("local", "1"), basic("ana", "s3cret"));
            assertEquals("/api/sessions", rows.get(0).path("asked").asText());
        }
    }

    @Test
    void thePathIsDecodedOnce() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0"))) {
            server.route("/api/", r -> StageHttp.Response.json(200, RecordJson.MAPPER.createObjectNode().put("path", r.path()).toString()));
            String base = "http://127.0.0.1:" + server.port();
            HttpResponse<String> percent = get(client(), base + "/api/threads/%25/1", null);
            assertEquals(200, percent.statusCode(), percent.body());
            assertEquals("/api/threads/%/1", RecordJson.MAPPER.readTree(percent.body()).path("path").asText());
            HttpResponse<String> twice = get(client(), base + "/api/threads/%2541%20b/1", null);
            assertEquals("/api/threads/%41 b/1", RecordJson.MAPPER.readTree(twice.body()).path("path").asText(), "not 'A b'");
            // an encoded '/' would be a second separator: refused, in the one error shape
            HttpResponse<String> slash = get(client(), base + "/api/threads/a%2Fb/1", null);
            assertEquals(400, slash.statusCode());
            assertTrue(RecordJson.MAPPER.readTree(slash.body()).has("error"), slash.body());
        }
    }

    @Test
    void healthIsMatchedExactlyAndNothingElseGoesWithoutAUser() throws Exception {
        try (StageHttp open = health(StageHttp.bind("127.0.0.1:0"))) {
            assertEquals(200, raw(open.port(), "/health").status());
            assertEquals(404, raw(open.port(), "/healthz").status());
            assertEquals(404, raw(open.port(), "/health/../metrics").status());
            assertEquals(404, raw(open.port(), "/health/").status());
        }
        try (StageHttp guarded = health(StageHttp.bind("127.0.0.1:0", null, users("ana", "s3cret")))) {
            assertEquals(200, raw(guarded.port(), "/health").status());
            for (String p : List.of("/healthz", "/health/../metrics", "/health/x", "/metrics", "/HEALTH")) {
                assertEquals(401, raw(guarded.port(), p).status(), p);
            }
            String ana = basic("ana", "s3cret");
            assertEquals(404, raw(guarded.port(), "/healthz", ana).status());
            assertEquals(404, raw(guarded.port(), "/health/../metrics", ana).status());
            assertEquals(200, raw(guarded.port(), "/metrics", ana).status());
        }
    }

    @Test
    void everyAnswerCarriesTheSecurityHeaders() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0", null, users("ana", "s3cret")).staticFiles("/swapstream-page"))) {
            String ana = basic("ana", "s3cret");
            for (Raw r : List.of(raw(server.port(), "/health"), raw(server.port(), "/", ana), raw(server.port(), "/page.css", ana),
                    raw(server.port(), "/nothing", ana), raw(server.port(), "/metrics"), raw(server.port(), "/%zz"))) {
                assertEquals("nosniff", r.header("x-content-type-options"), r.head());
                assertEquals("DENY", r.header("x-frame-options"), r.head());
                String csp = r.header("content-security-policy");
                assertNotNull(csp, r.head());
                assertTrue(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"), csp);
            }
            // the page loads what the policy allows: its own files, no inline style or script
            String page = raw(server.port(), "/", ana).body();
            assertFalse(page.contains("<style") || page.matches("(?s).*<script>.*") || page.matches("(?s).*\\son[a-z]+=.*"), page);
            assertTrue(page.contains("href=\"page.css\""), page);
            String fleet = new String(StageHttp.class.getResourceAsStream("/swapstream-fleet/index.html").readAllBytes(), StandardCharsets.UTF_8);
            assertFalse(fleet.contains("<style") || fleet.matches("(?s).*<script>.*"), fleet);
            assertNotNull(StageHttp.class.getResourceAsStream("/swapstream-fleet/fleet.css"));
        }
    }

    @Test
    void topIsCappedAndPaged() {
        assertEquals(20, StatsApi.top(Map.of()));
        assertEquals(StatsApi.MAX_TOP, StatsApi.top(Map.of("top", String.valueOf(StatsApi.MAX_TOP))));
        for (String bad : List.of(String.valueOf(StatsApi.MAX_TOP + 1), "1000000000", "99999999999999", "0", "-1", "x")) {
            StageHttp.HttpProblem e = assertThrows(StageHttp.HttpProblem.class, () -> StatsApi.top(Map.of("top", bad)));
            assertEquals(400, e.status, bad);
        }
        assertEquals(0, StatsApi.offset(Map.of(), 20));
        assertEquals(40, StatsApi.offset(Map.of("offset", "40"), 20));
        assertEquals(400, assertThrows(StageHttp.HttpProblem.class,
                () -> StatsApi.offset(Map.of("offset", String.valueOf(StatsApi.MAX_RANKED)), 1)).status);
        // an instance asked for its share of a page gives its first offset + top rows
        Map<String, String> share = StatsApi.firstRows(Map.of("top", "1000", "offset", "3000", "by", "waitSumNanos"), 3000, 1000);
        assertEquals(Map.of("top", "4000", "by", "waitSumNanos", "local", "1"), share);
        assertEquals(4000, StatsApi.top(share));
        // pages of the merged ranking, one after another, are the ranking
        var rows = RecordJson.MAPPER.createArrayNode();
        for (int i = 0; i < 7; i++) rows.addObject().put("session", "s").put("threadId", i).put("waitSumNanos", 100 - i);
        List<Integer> paged = new ArrayList<>();
        for (int offset = 0; offset < 7; offset += 3) {
            StatsApi.ranked(rows, "waitSumNanos", offset, 3).forEach(n -> paged.add(n.path("threadId").asInt()));
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6), paged);
    }

    // --- helpers

    static StageHttp health(StageHttp server) {
        server.route("/health", r -> StageHttp.Response.json(200, "{\"state\":\"RUNNING\"}"));
        server.route("/metrics", r -> StageHttp.Response.text(200, "# nothing"));
        server.start();
        return server;
    }

    static HttpClient client() {
        return HttpClient.newBuilder().connectTimeout(BOUND).build();
    }

    HttpUsers users(String name, String password) throws IOException {
        Path file = dir.resolve("users-" + name);
        // few iterations: the tests check the logic, not the hash's cost
        Files.writeString(file, HttpUsers.line(name, password.toCharArray(), 1000) + "\n");
        return HttpUsers.read(file);
    }

    HttpTls tls() throws Exception {
        return StageHttpSecurityTest.selfSigned(dir);
    }

    static void await(BooleanSupplier done, String what) throws InterruptedException {
        long until = System.nanoTime() + BOUND.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) throw new AssertionError("not within " + BOUND + ": " + what);
            Thread.sleep(10);
        }
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    /** An answer read off a socket, the request sent exactly as written (no client tidies its path). */
    record Raw(int status, String head, String body) {
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) return line.substring(colon + 1).strip();
            }
            return null;
        }
    }

    static Raw raw(int port, String path) throws IOException {
        return raw(port, path, null);
    }

    static Raw raw(int port, String path, String authorization) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) BOUND.toMillis());
            String request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + (authorization == null ? "" : "Authorization: " + authorization + "\r\n") + "\r\n";
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            String all = new String(readAll(s.getInputStream()), StandardCharsets.UTF_8);
            int end = all.indexOf("\r\n\r\n");
            String head = all.substring(0, end);
            return new Raw(Integer.parseInt(head.substring(9, 12)), head, all.substring(end + 4));
        }
    }

    /** Sockets that send a little and then nothing, closed at the end. */
    static final class Stalled implements AutoCloseable {
        private final List<Socket> sockets = new ArrayList<>();

        void open(int port, byte[] first) throws IOException {
            Socket s = new Socket();
            sockets.add(s);
            s.connect(new InetSocketAddress("127.0.0.1", port), (int) BOUND.toMillis());
            OutputStream out = s.getOutputStream();
            out.write(first);
            out.flush();
        }

        @Override
        public void close() throws IOException {
            for (Socket s : sockets) s.close();
        }
    }

    static final class MutableClock extends java.time.Clock {
        private java.time.Instant now = java.time.Instant.parse("2026-11-28T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return now;
        }
    }
}
