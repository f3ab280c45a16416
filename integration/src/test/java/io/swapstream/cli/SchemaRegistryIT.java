package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.swapstream.schemas.RecordTopics;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SchemaHistory;
import io.swapstream.schemas.serde.SchemaRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificData;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The pipeline through a real Apicurio Registry: Confluent's wire format, the same rows, registration and refusal. */
@ExtendWith({KafkaBroker.class, ApicurioRegistry.class})
class SchemaRegistryIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir Path dir;

    static String prefix() {
        return "sr" + UUID.randomUUID().toString().substring(0, 6) + ".";
    }

    static long fingerprint(String schemaJson) {
        return SchemaNormalization.parsingFingerprint64(new Schema.Parser().parse(schemaJson));
    }

    @Test
    void runThroughTheRegistryGivesTheSameRowsInConfluentsWireFormat(KafkaBroker.Bootstrap kafka, ApicurioRegistry.Url registry)
            throws Exception {
        Path f = dir.resolve("web01.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000", "--mode", "cswitch").exit());
        String framed = prefix();
        String plain = prefix();
        CliRunner with = CliRunner.run("run", f.toString(), "-b", kafka.servers(), "--topic-prefix", framed, "--window", "1s",
                "--format", "table", "--schema-registry", registry.root());
        CliRunner without = CliRunner.run("run", f.toString(), "-b", kafka.servers(), "--topic-prefix", plain, "--window", "1s",
                "--format", "table");
        assertEquals(0, with.exit(), with.err());
        assertEquals(0, without.exit(), without.err());
        assertFalse(with.out().isBlank());
        assertEquals(without.out(), with.out(), "the threads and processes printed");

        for (String suffix : List.of(SwapstreamConfig.SESSIONS, SwapstreamConfig.SWITCH_BATCHES, SwapstreamConfig.THREADS,
                SwapstreamConfig.THREAD_STATS, SwapstreamConfig.PROCESS_STATS, SwapstreamConfig.HOST_STATS, SwapstreamConfig.WAKE_EDGES)) {
            String topic = framed + suffix;
            Schema current = SpecificData.get().getSchema(RecordTopics.VALUE_TYPES.get(suffix));
            Set<Integer> ids = new HashSet<>();
            List<ConsumerRecord<String, byte[]>> records = ClusterFaultIT.readAll(kafka.servers(), topic);
            assertFalse(records.isEmpty(), topic);
            for (ConsumerRecord<String, byte[]> r : records) {
                if (r.value() == null) continue;
                assertEquals(0, r.value()[0], topic + " value starts with Confluent's magic byte");
                ids.add(java.nio.ByteBuffer.wrap(r.value(), 1, 4).getInt());
            }
            assertEquals(1, ids.size(), topic + ": one schema id");
            int id = ids.iterator().next();
            // Confluent's API gives the schema of the id, and the subject's latest version is it
            JsonNode byId = JSON.readTree(registry.get("/schemas/ids/" + id));
            assertEquals(SchemaNormalization.parsingFingerprint64(current), fingerprint(byId.get("schema").asText()), topic);
            JsonNode latest = JSON.readTree(registry.get("/subjects/" + topic + "-value/versions/latest"));
            assertEquals(id, latest.get("id").asInt(), topic);
            assertEquals("BACKWARD", JSON.readTree(registry.get("/config/" + topic + "-value")).get("compatibilityLevel").asText());
            // no subject for the stages' own changelogs and repartition topics
        }
        for (JsonNode subject : JSON.readTree(registry.get("/subjects"))) {
            if (subject.asText().startsWith(framed)) {
                assertTrue(RecordTopics.VALUE_TYPES.containsKey(subject.asText().substring(framed.length()).replace("-value", "")),
                        "a subject of a record topic: " + subject.asText());
            }
        }

        // tail reads either framing: with the registry, the same rows as the single-object topic's
        for (String suffix : List.of(SwapstreamConfig.THREAD_STATS, SwapstreamConfig.PROCESS_STATS)) {
            CliRunner a = CliRunner.run("tail", suffix, "--from-beginning", "-b", kafka.servers(), "--topic-prefix", framed,
                    "--schema-registry", registry.root());
            CliRunner b = CliRunner.run("tail", suffix, "--from-beginning", "-b", kafka.servers(), "--topic-prefix", plain);
            assertEquals(0, a.exit(), a.err());
            List<String> x = new ArrayList<>(a.out().lines().toList());
            List<String> y = new ArrayList<>(b.out().lines().toList());
            x.sort(null);
            y.sort(null);
            assertFalse(x.isEmpty());
            assertEquals(y, x, suffix);
            // without it, each record says what it needs, and nothing stops
            CliRunner c = CliRunner.run("tail", suffix, "--from-beginning", "-b", kafka.servers(), "--topic-prefix", framed);
            assertEquals(0, c.exit(), c.err());
            assertTrue(c.out().lines().allMatch(l -> l.contains("in Confluent's wire format (schema id") && l.contains("--schema-registry URL")),
                    c.out());
        }
    }

    @Test
    void registerPutsEveryVersionInOrderUnderBackward(ApicurioRegistry.Url registry) throws Exception {
        String p = prefix();
        CliRunner first = CliRunner.run("schemas", "--register", registry.root(), "--topic-prefix", p);
        assertEquals(0, first.exit(), first.err());
        String subject = p + SwapstreamConfig.THREAD_STATS + "-value";
        List<Schema> versions = new ArrayList<>(SchemaHistory.earlier(ThreadStats.class));
        versions.add(ThreadStats.getClassSchema());
        JsonNode listed = JSON.readTree(registry.get("/subjects/" + subject + "/versions"));
        assertEquals(versions.size(), listed.size(), listed.toString());
        for (int i = 0; i < versions.size(); i++) {
            JsonNode v = JSON.readTree(registry.get("/subjects/" + subject + "/versions/" + listed.get(i).asInt()));
            assertEquals(SchemaNormalization.parsingFingerprint64(versions.get(i)), fingerprint(v.get("schema").asText()), "version " + (i + 1));
        }
        assertEquals("BACKWARD", JSON.readTree(registry.get("/config/" + subject)).get("compatibilityLevel").asText());
        // the batches' first two versions cannot be read by the third: not registered, and said so
        assertEquals(2, JSON.readTree(registry.get("/subjects/" + p + SwapstreamConfig.SWITCH_BATCHES + "-value/versions")).size());
        assertTrue(first.out().contains("ContextSwitchBatch v1 to v2 not registered"), first.out());

        CliRunner again = CliRunner.run("schemas", "--register", registry.root(), "--topic-prefix", p);
        assertEquals(0, again.exit(), again.err());
        assertEquals(first.out(), again.out(), "registering again finds the same ids");
        assertEquals(listed, JSON.readTree(registry.get("/subjects/" + subject + "/versions")));

        // a subject that a stage began with the current schema gets no earlier version after it
        String q = prefix();
        SchemaRegistry.of(Map.of(SwapstreamConfig.SCHEMA_REGISTRY_URL, registry.root())).registerTopics(q);
        CliRunner late = CliRunner.run("schemas", "--register", registry.root(), "--topic-prefix", q);
        assertEquals(0, late.exit(), late.err());
        assertTrue(late.out().contains("not added: the subject already has a later version"), late.out());
        JsonNode latest = JSON.readTree(registry.get("/subjects/" + q + SwapstreamConfig.THREAD_STATS + "-value/versions/latest"));
        assertEquals(SchemaNormalization.parsingFingerprint64(ThreadStats.getClassSchema()), fingerprint(latest.get("schema").asText()));
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // a guard: a stage that registered would run until stopped
    void aRefusalIsOneLineAndNothingIsWritten(KafkaBroker.Bootstrap kafka, ApicurioRegistry.Url registry) throws Exception {
        String p = prefix();
        String subject = p + SwapstreamConfig.THREAD_STATS + "-value";
        // someone else's ThreadStats under the subject, checked BACKWARD: ours has fields it lacks, without defaults
        String theirs = "{\"type\":\"record\",\"name\":\"ThreadStats\",\"namespace\":\"io.swapstream.schemas.avro\","
                + "\"fields\":[{\"name\":\"session\",\"type\":\"string\"}]}";
        assertEquals(200, registry.send("POST", "/subjects/" + subject + "/versions", JSON.writeValueAsString(Map.of("schema", theirs))));
        assertEquals(200, registry.send("PUT", "/config/" + subject, "{\"compatibility\":\"BACKWARD\"}"));
        Path f = dir.resolve("web01.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "2000").exit());

        CliRunner stage = CliRunner.run("aggregate", "-b", kafka.servers(), "--topic-prefix", p, "--schema-registry", registry.root(),
                "--state-dir", dir.resolve("state").toString(), "--http", "127.0.0.1:0");
        CliRunner run = CliRunner.run("run", f.toString(), "-b", kafka.servers(), "--topic-prefix", p, "--schema-registry", registry.root());
        for (CliRunner c : List.of(stage, run)) {
            assertEquals(Swapstream.EXIT_FAILURE, c.exit(), c.err());
            List<String> lines = c.err().lines().filter(l -> l.startsWith("swapstream: ")).toList();
            assertEquals(1, lines.size(), c.err());
            assertTrue(lines.get(0).startsWith("swapstream: schema registry " + registry.root() + " refused to register ThreadStats under "
                    + subject + ": Incompatible"), lines.get(0));
            assertFalse(c.err().contains("\tat "), "no stack trace");
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            assertTrue(admin.listTopics().names().get().stream().noneMatch(t -> t.startsWith(p)), "no topic created");
        }
        // the subject still holds only theirs
        assertEquals(1, JSON.readTree(registry.get("/subjects/" + subject + "/versions")).size());
    }
}
