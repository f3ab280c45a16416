package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * docker-compose.yml read as a user would run it (no Docker engine here, so read, not run): the
 * three-node layout ClusterIT exercises in-JVM, brokers reachable from the host, data on volumes,
 * health checks, restarts, and stage command lines this build accepts.
 */
class ComposeFileTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    final JsonNode compose;

    ComposeFileTest() throws Exception {
        // SnakeYAML itself: it applies merge keys (<<: *anchor) as Compose does, Jackson's YAML reader does not
        try (var in = Files.newInputStream(ROOT.resolve("docker-compose.yml"))) {
            compose = new ObjectMapper().valueToTree(new org.yaml.snakeyaml.Yaml().load(in));
        }
    }

    JsonNode service(String name) {
        JsonNode s = compose.path("services").path(name);
        assertFalse(s.isMissingNode(), "service " + name);
        return s;
    }

    @Test
    void threeBrokersReplicatedAndReachableFromTheHost() {
        for (int id = 1; id <= 3; id++) {
            JsonNode k = service("kafka-" + id);
            JsonNode env = k.path("environment");
            assertEquals(id, env.path("KAFKA_NODE_ID").asInt());
            assertEquals("1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093", env.path("KAFKA_CONTROLLER_QUORUM_VOTERS").asText());
            assertEquals(3, env.path("KAFKA_DEFAULT_REPLICATION_FACTOR").asInt());
            assertEquals(2, env.path("KAFKA_MIN_INSYNC_REPLICAS").asInt());
            assertEquals(3, env.path("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR").asInt());
            assertEquals(3, env.path("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR").asInt());
            assertEquals(2, env.path("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR").asInt());
            // the host reaches each node on the port it advertises
            String advertised = env.path("KAFKA_ADVERTISED_LISTENERS").asText();
            String external = advertised.replaceAll(".*EXTERNAL://localhost:(\\d+).*", "$1");
            assertTrue(external.matches("\\d+"), advertised);
            assertEquals(external + ":" + external, k.path("ports").get(0).asText());
            assertTrue(env.path("KAFKA_LISTENERS").asText().contains("EXTERNAL://:" + external));
            assertTrue(advertised.contains("INTERNAL://kafka-" + id + ":19092"), advertised);
            assertEquals("kafka-" + id + "-data:" + env.path("KAFKA_LOG_DIRS").asText(), k.path("volumes").get(0).asText(),
                    "Kafka's data on a volume");
            assertTrue(compose.path("volumes").has("kafka-" + id + "-data"));
            assertFalse(k.path("healthcheck").isMissingNode());
            assertEquals("unless-stopped", k.path("restart").asText());
        }
    }

    @Test
    void stagesRunCommandLinesThisBuildAccepts() {
        for (String name : List.of("decode", "aggregate", "rollup", "ingest")) {
            JsonNode s = service(name);
            CommandLine.ParseResult parsed = Swapstream.commandLine().parseArgs(args(s));
            assertEquals(name, parsed.subcommand().commandSpec().name());
            assertEquals((short) 3, (short) parsed.subcommand().matchedOptionValue("--replication", (short) 0), name);
            assertEquals("kafka-1:19092,kafka-2:19092,kafka-3:19092", parsed.subcommand().matchedOptionValue("--bootstrap-servers", ""));
            assertEquals("unless-stopped", s.path("restart").asText());
            // the stages start once the cluster is up, with Kafka's default features: nothing changes them
            for (int id = 1; id <= 3; id++) {
                assertEquals("service_healthy", s.path("depends_on").path("kafka-" + id).path("condition").asText());
            }
        }
        assertTrue(compose.path("services").path("kafka-features").isMissingNode(), "no service changes the cluster's features");
        for (String name : List.of("decode", "aggregate", "rollup")) {
            JsonNode s = service(name);
            CommandLine.ParseResult parsed = Swapstream.commandLine().parseArgs(args(s));
            String http = parsed.subcommand().matchedOptionValue("--http", "");
            assertTrue(http.startsWith("0.0.0.0:"), name + " listens beyond the container's loopback: " + http);
            String port = http.substring(http.indexOf(':') + 1);
            assertEquals(port + ":" + port, s.path("ports").get(0).asText());
            assertTrue(s.path("healthcheck").path("test").toString().contains("localhost:" + port + "/health"));
            assertTrue(s.path("volumes").get(0).asText().endsWith(":" + parsed.subcommand().matchedOptionValue("--state-dir", Path.of("")).toString()),
                    "state on a volume");
        }
        CommandLine.ParseResult ingest = Swapstream.commandLine().parseArgs(args(service("ingest")));
        assertEquals(Path.of("/traces"), ingest.subcommand().matchedOptionValue("--watch", Path.of("")),
                "an empty ./traces is a directory to watch, not a literal *.etl");
    }

    static String[] args(JsonNode service) {
        List<String> args = new ArrayList<>();
        service.path("command").forEach(a -> args.add(a.asText()));
        return args.toArray(String[]::new);
    }

    @Test
    void theImageRunsUnprivilegedAndTracesStayOutOfTheBuild() throws Exception {
        List<String> ignore = Files.readAllLines(ROOT.resolve(".dockerignore"));
        assertTrue(ignore.contains("traces") && ignore.contains("**/*.etl"), ignore.toString());
        List<String> users = Files.readAllLines(ROOT.resolve("Dockerfile")).stream().filter(l -> l.startsWith("USER ")).toList();
        assertEquals(List.of("USER swapstream"), users);
    }

    @Test
    void prometheusScrapesEveryStageAndGrafanaHasTheDashboard() throws Exception {
        JsonNode prometheus = service("prometheus");
        JsonNode grafana = service("grafana");
        List<String> mounts = new ArrayList<>();
        for (JsonNode s : List.of(prometheus, grafana)) s.path("volumes").forEach(v -> mounts.add(v.asText()));
        for (String m : mounts) {
            if (!m.startsWith("./")) continue;
            assertTrue(Files.exists(ROOT.resolve(m.substring(2, m.indexOf(':')))), "mounted file " + m);
        }
        assertTrue(mounts.stream().anyMatch(m -> m.startsWith("./dashboards/swapstream-fleet.json:")), "the dashboard provisioned");
        // its scrape targets are the stages' services and ports
        String config = Files.readString(ROOT.resolve("dashboards/prometheus.yml"));
        for (String stage : List.of("decode", "aggregate", "rollup")) {
            String port = service(stage).path("ports").get(0).asText().split(":")[0];
            assertTrue(config.contains("\"" + stage + ":" + port + "\""), stage + ":" + port + " scraped");
        }
        // and the ingester's /metrics (the host-side alerts)
        String ingestHttp = Swapstream.commandLine().parseArgs(args(service("ingest"))).subcommand().matchedOptionValue("--http", "");
        assertTrue(config.contains("\"ingest:" + ingestHttp.substring(ingestHttp.indexOf(':') + 1) + "\""), "ingest " + ingestHttp + " scraped");
    }
}
