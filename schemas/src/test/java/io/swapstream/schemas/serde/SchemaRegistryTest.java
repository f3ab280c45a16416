package io.swapstream.schemas.serde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadInfo;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

/** What needs no registry: the framing, the URL forms, credentials and what a refusal says (SchemaRegistryIT has a real one). */
class SchemaRegistryTest {
    @Test
    void framingIsAZeroByteAndTheIdBigEndian() {
        byte[] p = RegistryFraming.prefix(0x01020304);
        assertArrayEquals(new byte[] {0, 1, 2, 3, 4}, p);
        assertTrue(RegistryFraming.isFramed(p));
        assertEquals(0x01020304, RegistryFraming.id(p));
        assertEquals(Integer.MAX_VALUE, RegistryFraming.id(RegistryFraming.prefix(Integer.MAX_VALUE)));
    }

    @Test
    void aSingleObjectReaderSaysAFramedRecordNeedsTheRegistry() {
        SingleObjectAvroSerde<ThreadInfo> serde = new SingleObjectAvroSerde<>(ThreadInfo.class);
        byte[] framed = {0, 0, 0, 0, 23, 2, 'x'};
        SerializationException e = assertThrows(SerializationException.class, () -> serde.deserialize("etw.threads", framed));
        assertEquals("a etw.threads value in Confluent's wire format (schema id 23): read it with --schema-registry URL", e.getMessage());
    }

    @Test
    void aUrlWithEitherApisPathIsTheRegistrysRoot() {
        assertEquals("http://h:8080", SchemaRegistry.root("http://h:8080/"));
        assertEquals("http://h:8080", SchemaRegistry.root("http://h:8080/apis/ccompat/v7"));
        assertEquals("https://h/r", SchemaRegistry.root("https://h/r/apis/registry/v2/"));
        assertNull(SchemaRegistry.of(Map.of()));
    }

    @Test
    void aRefusalIsBriefWithoutTheRepeatedCauses() {
        String m = "Incompatible artifact: s [AVRO], num of incompatible diffs: {1}, list of diff types: [a at /fields/1] Causes: a at /fields/1";
        assertEquals("Incompatible artifact: s [AVRO], num of incompatible diffs: {1}, list of diff types: [a at /fields/1]",
                SchemaRegistry.brief(m));
        assertEquals(243, SchemaRegistry.brief("x".repeat(1000)).length());
    }

    /** Confluent's basic.auth.user.info reaches the registry as HTTP basic authentication; its answer is one line. */
    @Test
    void credentialsGoAsBasicAuthentication() throws Exception {
        List<String> authorization = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", x -> {
            authorization.add(String.valueOf(x.getRequestHeaders().getFirst("Authorization")));
            byte[] body = "{\"message\":\"no entry\",\"error_code\":403,\"name\":\"ForbiddenException\"}".getBytes(StandardCharsets.UTF_8);
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(403, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort();
            SchemaRegistry r = SchemaRegistry.of(Map.of(SwapstreamConfig.SCHEMA_REGISTRY_URL, url,
                    SchemaRegistry.BASIC_AUTH_USER_INFO, "ingest:s3cret"));
            SchemaRegistryException e = assertThrows(SchemaRegistryException.class, () -> r.register("t-value", ThreadInfo.getClassSchema()));
            assertEquals("schema registry " + url + " refused the credentials to register ThreadInfo under t-value: Authorization error", e.getMessage());
            assertTrue(!e.getMessage().contains("\n"), e.getMessage());
            assertEquals("Basic " + Base64.getEncoder().encodeToString("ingest:s3cret".getBytes(StandardCharsets.UTF_8)), authorization.get(0));
        } finally {
            server.stop(0);
        }
    }
}
