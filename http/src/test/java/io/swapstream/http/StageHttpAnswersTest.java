package io.swapstream.http;

import static io.swapstream.http.StageHttpHardeningTest.client;
import static io.swapstream.http.StageHttpHardeningTest.health;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.swapstream.schemas.json.RecordJson;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a client gets from a stage whatever it asks (issue 58, item 14): an index at {@code /} on a stage without a page,
 * and every refusal in the one error shape, {@code {"error": "..."}}, as JSON: a method other than GET (405, with
 * {@code Allow}), a parameter given twice (400).
 */
@Timeout(120)
class StageHttpAnswersTest {
    static HttpResponse<String> send(String method, String uri) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(30));
        b.method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("{}"));
        return client().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode errorShape(HttpResponse<String> r) throws Exception {
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.headers().toString());
        JsonNode n = RecordJson.MAPPER.readTree(r.body());
        assertTrue(n.isObject() && n.size() == 1 && n.path("error").isTextual() && !n.path("error").asText().isBlank(), r.body());
        return n;
    }

    /** A stage with only /health and /metrics (decode, ingest) lists them at / rather than a 404. */
    @Test
    void aStageWithoutAPageListsItsRoutesAtTheRoot() throws Exception {
        try (StageHttp decode = health(StageHttp.bind("127.0.0.1:0"))) {
            String base = "http://127.0.0.1:" + decode.port();
            HttpResponse<String> index = send("GET", base + "/");
            assertEquals(200, index.statusCode(), index.body());
            assertTrue(index.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
            List<String> routes = new java.util.ArrayList<>();
            for (JsonNode n : RecordJson.MAPPER.readTree(index.body()).path("routes")) routes.add(n.asText());
            assertEquals(List.of("/health", "/metrics"), routes);
            // anything else is still the one error shape
            HttpResponse<String> nothing = send("GET", base + "/nothing");
            assertEquals(404, nothing.statusCode());
            errorShape(nothing);
            assertEquals(400, send("GET", base + "/?foo=1").statusCode(), "the index takes no parameter");
        }
    }

    @Test
    void aMethodOtherThanGetIsA405InTheErrorShapeWithAllow() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0"))) {
            String base = "http://127.0.0.1:" + server.port();
            for (String method : List.of("POST", "PUT", "DELETE")) {
                for (String path : List.of("/health", "/metrics", "/")) {
                    HttpResponse<String> r = send(method, base + path);
                    assertEquals(405, r.statusCode(), method + " " + path);
                    assertTrue(errorShape(r).path("error").asText().contains("GET"), r.body());
                    assertEquals("GET, HEAD", r.headers().firstValue("Allow").orElse(null), method + " " + path);
                    assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(null));
                }
            }
            assertEquals(200, send("GET", base + "/health").statusCode());
        }
    }

    @Test
    void aParameterGivenTwiceIsA400InTheErrorShape() throws Exception {
        try (StageHttp server = health(StageHttp.bind("127.0.0.1:0"))) {
            server.route("/api/", r -> StageHttp.Response.json(200, RecordJson.MAPPER.valueToTree(r.query()).toString()));
            String base = "http://127.0.0.1:" + server.port();
            HttpResponse<String> twice = send("GET", base + "/api/threads?top=10&top=20");
            assertEquals(400, twice.statusCode(), twice.body());
            assertTrue(errorShape(twice).path("error").asText().contains("'top'"), twice.body());
            // the same even when the values agree, or one is encoded
            assertEquals(400, send("GET", base + "/api/threads?top=10&top=10").statusCode());
            assertEquals(400, send("GET", base + "/api/threads?top=10&%74op=20").statusCode());
            HttpResponse<String> once = send("GET", base + "/api/threads?top=10&by=waitP99Nanos&&offset=0");
            assertEquals(200, once.statusCode(), once.body());
            assertEquals("{\"top\":\"10\",\"by\":\"waitP99Nanos\",\"offset\":\"0\"}", once.body());
        }
    }
}
