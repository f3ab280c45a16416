package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka Connect standalone worker (Apache Kafka's connect-runtime, a process of its own) with
 * Apicurio's Avro converter and the file sink exports etw.process-stats and etw.thread-stats as the
 * pipeline wrote them through the registry: every exported row equals what {@code tail} prints.
 * The worker's configuration is the one docs/reading-the-topics.md gives.
 */
@ExtendWith({KafkaBroker.class, ApicurioRegistry.class})
class ConnectExportIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Top-level bytes fields the documented sink drops: a text file would hold only their Java object names. */
    static final List<String> SKETCHES = List.of("waitSketch", "readySketch", "runSketch", "readyIdleWakeSketch", "readyContendedSketch");

    @TempDir Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // a guard against a worker that never exports
    void aFileSinkExportsTheRowsTailPrints(KafkaBroker.Bootstrap kafka, ApicurioRegistry.Url registry) throws Exception {
        String prefix = "cx" + UUID.randomUUID().toString().substring(0, 6) + ".";
        Path f = dir.resolve("web01.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        CliRunner run = CliRunner.run("run", f.toString(), "-b", kafka.servers(), "--topic-prefix", prefix, "--window", "1s",
                "--format", "table", "--schema-registry", registry.root());
        assertEquals(0, run.exit(), run.err());

        Path worker = dir.resolve("worker.properties");
        Files.writeString(worker, String.join("\n",
                "bootstrap.servers=" + kafka.servers(),
                "listeners=http://127.0.0.1:0",
                "offset.storage.file.filename=" + dir.resolve("connect.offsets"),
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=io.apicurio.registry.utils.converter.AvroConverter",
                "value.converter.apicurio.registry.url=" + registry.root() + "/apis/registry/v2",
                "value.converter.apicurio.registry.as-confluent=true",
                "value.converter.apicurio.registry.use-id=contentId",
                "value.converter.apicurio.registry.headers.enabled=false",
                "consumer.isolation.level=read_committed",
                "consumer.max.partition.fetch.bytes=" + SwapstreamConfig.MAX_MESSAGE_BYTES,
                "") );
        List<String> args = new ArrayList<>(List.of(worker.toString()));
        Map<String, Path> files = new LinkedHashMap<>();
        for (String suffix : List.of(SwapstreamConfig.PROCESS_STATS, SwapstreamConfig.THREAD_STATS)) {
            Path out = dir.resolve(suffix + ".txt");
            files.put(suffix, out);
            Path sink = dir.resolve(suffix + "-sink.properties");
            Files.writeString(sink, String.join("\n",
                    "name=" + suffix + "-file",
                    "connector.class=org.apache.kafka.connect.file.FileStreamSinkConnector",
                    "tasks.max=1",
                    "topics=" + prefix + suffix,
                    "file=" + out,
                    "transforms=dropSketches",
                    "transforms.dropSketches.type=org.apache.kafka.connect.transforms.ReplaceField$Value",
                    "transforms.dropSketches.exclude=" + String.join(",", SKETCHES),
                    ""));
            args.add(sink.toString());
        }
        Map<String, Integer> expected = new HashMap<>();
        for (String suffix : files.keySet()) {
            expected.put(suffix, (int) ClusterFaultIT.readAll(kafka.servers(), prefix + suffix).stream().filter(r -> r.value() != null).count());
        }

        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-cp", System.getProperty("java.class.path"), "org.apache.kafka.connect.cli.ConnectStandalone"));
        command.addAll(args);
        Process connect = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("connect.log").toFile()).start();
        try {
            for (Map.Entry<String, Path> e : files.entrySet()) {
                while (lines(e.getValue()).size() < expected.get(e.getKey())) {
                    assertTrue(connect.isAlive(), () -> "the Connect worker ended: " + tail(dir.resolve("connect.log")));
                    Thread.sleep(200);
                }
            }
        } finally {
            connect.destroy();
            if (!connect.waitFor(30, TimeUnit.SECONDS)) connect.destroyForcibly();
        }

        Map<String, Schema> schemas = Map.of(SwapstreamConfig.PROCESS_STATS, ProcessStats.getClassSchema(),
                SwapstreamConfig.THREAD_STATS, ThreadStats.getClassSchema());
        for (Map.Entry<String, Path> e : files.entrySet()) {
            Schema schema = schemas.get(e.getKey());
            CliRunner tail = CliRunner.run("tail", e.getKey(), "--from-beginning", "-b", kafka.servers(), "--topic-prefix", prefix,
                    "--schema-registry", registry.root());
            assertEquals(0, tail.exit(), tail.err());
            List<Object> printed = new ArrayList<>();
            for (String line : tail.out().lines().toList()) {
                Map<String, Object> row = new TreeMap<>((Map<String, Object>) StructText.fromJson(schema, JSON.readTree(line)));
                SKETCHES.forEach(row::remove);
                printed.add(row);
            }
            List<Object> exported = new ArrayList<>();
            for (String line : lines(e.getValue())) exported.add(new TreeMap<>((Map<String, Object>) StructText.parse(line)));
            assertFalse(exported.isEmpty());
            assertEquals(printed.size(), exported.size(), e.getKey());
            List<String> a = printed.stream().map(Object::toString).sorted().toList();
            List<String> b = exported.stream().map(Object::toString).sorted().toList();
            assertEquals(a, b, e.getKey() + ": every exported row is a row tail prints");
        }
    }

    static List<String> lines(Path file) throws java.io.IOException {
        return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
    }

    static String tail(Path log) {
        try {
            List<String> l = Files.readAllLines(log);
            return String.join("\n", l.subList(Math.max(0, l.size() - 30), l.size()));
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /**
     * Connect's text of a value (what the file sink writes: {@code Struct{a=1,b=x}}, lists as {@code [1, 2]}, maps as
     * {@code {k=v}}, bytes as a Java object name) and a JSON row in the same terms, to compare: a record's fields by name
     * (null ones absent, as Struct prints them), scalars as their text, bytes as "BYTES". The names in the generated
     * traces hold none of ",{}[]=".
     */
    static final class StructText {
        private final String s;
        private int i;

        private StructText(String s) {
            this.s = s;
        }

        static Object parse(String line) {
            StructText t = new StructText(line);
            Object v = t.value(",}");
            if (t.i != line.length()) throw new IllegalArgumentException("left over at " + t.i + ": " + line);
            return v;
        }

        private Object value(String stops) {
            if (s.startsWith("Struct{", i)) {
                i += "Struct{".length();
                return pairs(",", new LinkedHashMap<>());
            }
            if (s.startsWith("[B@", i)) {
                scalar(stops);
                return "BYTES";
            }
            if (s.charAt(i) == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                while (s.charAt(i) != ']') {
                    l.add(value(",]"));
                    if (s.startsWith(", ", i)) i += 2;
                }
                i++;
                return l;
            }
            if (s.charAt(i) == '{') {
                i++;
                return pairs(", ", new TreeMap<>());
            }
            return scalar(stops);
        }

        /** name=value pairs up to the closing brace, split by {@code separator}: a struct's fields or a map's entries. */
        private Map<String, Object> pairs(String separator, Map<String, Object> into) {
            while (s.charAt(i) != '}') {
                int eq = s.indexOf('=', i);
                String name = s.substring(i, eq);
                i = eq + 1;
                into.put(name, value(",}"));
                if (s.startsWith(separator, i)) i += separator.length();
            }
            i++;
            return into;
        }

        private String scalar(String stops) {
            int start = i;
            while (i < s.length() && stops.indexOf(s.charAt(i)) < 0) i++;
            return s.substring(start, i);
        }

        /** A JSON row of {@code schema} in the same terms. */
        static Object fromJson(Schema schema, JsonNode v) {
            switch (schema.getType()) {
                case UNION: {
                    for (Schema branch : schema.getTypes()) if (branch.getType() != Schema.Type.NULL) return fromJson(branch, v);
                    return "null";
                }
                case RECORD: {
                    Map<String, Object> m = new TreeMap<>();
                    for (Schema.Field field : schema.getFields()) {
                        JsonNode x = v.get(field.name());
                        if (x != null && !x.isNull()) m.put(field.name(), fromJson(field.schema(), x));
                    }
                    return m;
                }
                case MAP: {
                    Map<String, Object> m = new TreeMap<>();
                    v.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().isNull() ? "null" : fromJson(schema.getValueType(), e.getValue())));
                    return m;
                }
                case ARRAY: {
                    List<Object> l = new ArrayList<>();
                    v.forEach(x -> l.add(x.isNull() ? "null" : fromJson(schema.getElementType(), x)));
                    return l;
                }
                case BYTES:
                case FIXED:
                    return "BYTES";
                case DOUBLE:
                    return Double.toString(v.asDouble());
                case FLOAT:
                    return Float.toString((float) v.asDouble());
                default:
                    return v.asText();
            }
        }
    }
}
