package io.swapstream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stage's HTTP side with --http-tls and --http-users: a TLS handshake, 401 without a user, 200 with one. */
class StageHttpSecurityTest {
    @TempDir Path dir;

    @Test
    void httpsWithUsersLetsInOnlyAKnownUser() throws Exception {
        HttpTls tls = selfSigned(dir);
        Path users = dir.resolve("users");
        Files.writeString(users, "# who may read the statistics\n" + HttpUsers.line("ana", "s3cret".toCharArray()) + "\n");
        try (StageHttp server = StageHttp.bind("127.0.0.1:0", tls, HttpUsers.read(users))) {
            server.route("/health", r -> StageHttp.Response.json(200, "{}"));
            server.route("/api/", r -> StageHttp.Response.json(200, "[]"));
            server.start();
            assertEquals("https", server.scheme());
            assertNull(server.exposure(), "bound to loopback");
            HttpClient client = HttpClient.newBuilder().sslContext(tls.client()).connectTimeout(Duration.ofSeconds(5)).build();
            String base = "https://127.0.0.1:" + server.port();
            HttpResponse<String> anonymous = get(client, base + "/api/threads", null);
            assertEquals(401, anonymous.statusCode());
            assertTrue(anonymous.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Basic"));
            assertEquals(401, get(client, base + "/api/threads", basic("ana", "wrong")).statusCode());
            assertEquals(401, get(client, base + "/api/threads", basic("bob", "s3cret")).statusCode());
            for (int i = 0; i < 2; i++) { // the second time from what the first remembered
                HttpResponse<String> ok = get(client, base + "/api/threads", basic("ana", "s3cret"));
                assertEquals(200, ok.statusCode());
                assertEquals("[]", ok.body());
            }
            assertEquals(200, get(client, base + "/health", null).statusCode(), "probes need no password");
            // plain HTTP to the HTTPS port gets no answer; a client that does not trust the certificate fails its handshake
            assertThrows(java.io.IOException.class, () -> get(client, "http://127.0.0.1:" + server.port() + "/health", null));
            HttpClient untrusting = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThrows(javax.net.ssl.SSLHandshakeException.class, () -> get(untrusting, base + "/health", null));
        }
    }

    @Test
    void aBadUsersFileOrKeyStoreIsOneLineNamingIt() throws Exception {
        Path users = dir.resolve("users");
        Files.write(users, List.of("ana:plain:secret"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpUsers.read(users));
        assertTrue(e.getMessage().contains(users + " line 1"), e.getMessage());
        Path notAKeyStore = dir.resolve("k.p12");
        Files.writeString(notAKeyStore, "not a key store");
        e = assertThrows(IllegalArgumentException.class, () -> HttpTls.load(notAKeyStore, new char[0]));
        assertTrue(e.getMessage().startsWith("--http-tls " + notAKeyStore), e.getMessage());
    }

    static HttpResponse<String> get(HttpClient client, String uri, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10));
        if (authorization != null) b.header("Authorization", authorization);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** A self-signed key for 127.0.0.1 made by the JDK's keytool, in {@code dir}. */
    static HttpTls selfSigned(Path dir) throws Exception {
        Path keyStore = dir.resolve("stage.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-genkeypair",
                "-keystore", keyStore.toString(), "-storetype", "PKCS12", "-storepass", "changeit", "-keypass", "changeit",
                "-alias", "stage", "-keyalg", "EC", "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1", "-validity", "2")
                .redirectErrorStream(true).start();
        assertEquals(0, keytool.waitFor(), new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        return HttpTls.load(keyStore, "changeit".toCharArray());
    }
}
