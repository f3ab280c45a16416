package io.swapstream.cli.kafka;

import io.swapstream.local.UserInputException;
import io.swapstream.schemas.RecordTopics;
import io.swapstream.schemas.serde.SchemaHistory;
import io.swapstream.schemas.serde.SchemaRegistry;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code swapstream schemas}: every record's schema as a file that loads by itself (the types it refers
 * to written out inside it), the current version and each earlier one, with the single-object
 * fingerprint a record of that version carries.
 */
@Command(name = "schemas", description = "Write the topics' Avro schemas, each loadable alone (earlier versions too), with each"
        + " one's single-object fingerprint (the 8 bytes after C3 01 in a record); or register them all in a schema registry.")
public final class SchemasCommand implements Callable<Integer> {
    @Option(names = "--register", paramLabel = "URL", description = "register every schema, earlier versions first, under its topic's"
            + " value subject (TOPIC-value, compatibility BACKWARD) in this schema registry (Confluent's API or Apicurio's)")
    String register;

    @Option(names = "--topic-prefix", defaultValue = io.swapstream.schemas.SwapstreamConfig.DEFAULT_PREFIX, paramLabel = "PREFIX",
            description = "prefix of the topic names, for the subjects")
    String prefix;

    @Option(names = "--client-config", paramLabel = "FILE", description = "the registry's client properties (basic.auth.user.info,"
            + " apicurio.registry.request.ssl.*)")
    Path clientConfig;

    @Spec CommandSpec spec;

    @Option(names = "--out", paramLabel = "DIR", description = "the directory to write NAME.avsc, NAME.vN.avsc and fingerprints.txt"
            + " into; without it, the fingerprints are printed")
    Path out;

    /** A record's schema at one version: v is 0 for the current one. */
    record Version(String name, int v, Schema schema) {
        String file() {
            return v == 0 ? name + ".avsc" : name + ".v" + v + ".avsc";
        }

        /** The fingerprint as a record's bytes 2 to 9 hold it (little-endian), in hex. */
        String fingerprint() {
            long f = SchemaNormalization.parsingFingerprint64(schema);
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 8; i++) b.append(String.format("%02x", (f >>> (8 * i)) & 0xFF));
            return b.toString();
        }
    }

    /** Every record topic's versions, the first to the current (v 0). */
    static List<Version> versions() {
        List<Version> all = new ArrayList<>();
        for (Class<?> type : RecordTopics.VALUE_TYPES.values()) {
            List<Schema> versions = SchemaHistory.all(type);
            for (int i = 0; i < versions.size(); i++) {
                all.add(new Version(type.getSimpleName(), i == versions.size() - 1 ? 0 : i + 1, versions.get(i)));
            }
        }
        return all;
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter w = spec.commandLine().getOut();
        if (register != null) return register(w);
        List<String> lines = new ArrayList<>();
        for (Version v : versions()) {
            lines.add(String.format("%-20s %-8s %s", v.name(), v.v() == 0 ? "current" : "v" + v.v(), v.fingerprint()));
        }
        if (out == null) {
            lines.forEach(w::println);
        } else {
            if (Files.exists(out) && !Files.isDirectory(out)) throw new UserInputException("--out: " + out + " is a file, not a directory");
            Files.createDirectories(out);
            // Schema.toString writes each named type in full where it is first used: the file needs no other
            for (Version v : versions()) Files.writeString(out.resolve(v.file()), v.schema().toString(true) + "\n", StandardCharsets.UTF_8);
            Files.write(out.resolve("fingerprints.txt"), lines, StandardCharsets.UTF_8);
            w.println("wrote " + versions().size() + " schemas and fingerprints.txt to " + out);
        }
        w.flush();
        return 0;
    }

    /**
     * Each record's versions in order, from the first that every later one can read (BACKWARD, as the registry checks
     * them): a version after the newest one the subject already has, so the subject's latest stays the current schema.
     */
    private int register(PrintWriter w) {
        Map<String, Object> config = new HashMap<>(KafkaOptions.properties("--client-config", clientConfig));
        config.put(io.swapstream.schemas.SwapstreamConfig.SCHEMA_REGISTRY_URL, KafkaOptions.registryUrl("--register", register));
        SchemaRegistry registry = SchemaRegistry.of(config);
        int registered = 0;
        for (Map.Entry<String, Class<? extends SpecificRecord>> e : RecordTopics.VALUE_TYPES.entrySet()) {
            String subject = SchemaRegistry.subject(io.swapstream.schemas.SwapstreamConfig.topic(prefix, e.getKey()));
            String name = e.getValue().getSimpleName();
            List<Schema> versions = SchemaHistory.all(e.getValue());
            int from = 0;
            for (int i = 1; i < versions.size(); i++) {
                if (SchemaCompatibility.checkReaderWriterCompatibility(versions.get(i), versions.get(i - 1)).getType()
                        != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) from = i;
            }
            if (from > 0) {
                w.printf("%-32s %s v1 to v%d not registered: v%d cannot read them (the columns changed), so no BACKWARD subject"
                        + " holds both; records of theirs read only in single-object encoding%n", subject, name, from, from + 1);
            }
            // asked once each: whether the subject has the version already
            boolean[] present = new boolean[versions.size()];
            int newest = -1;
            for (int i = from; i < versions.size(); i++) {
                present[i] = registry.find(subject, versions.get(i)) != null;
                if (present[i]) newest = i;
            }
            for (int i = from; i < versions.size(); i++) {
                String label = i == versions.size() - 1 ? "current" : "v" + (i + 1);
                if (i < newest && !present[i]) {
                    w.printf("%-32s %-20s %-8s not added: the subject already has a later version%n", subject, name, label);
                    continue;
                }
                int id = registry.register(subject, versions.get(i));
                w.printf("%-32s %-20s %-8s id %d%n", subject, name, label, id);
                registered++;
            }
        }
        w.printf("%d schemas under %d subjects in %s%n", registered, RecordTopics.VALUE_TYPES.size(), registry.url());
        w.flush();
        return 0;
    }
}
