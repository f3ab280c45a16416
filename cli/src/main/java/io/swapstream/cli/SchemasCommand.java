package io.swapstream.cli;

import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SchemaHistory;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
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
        + " one's single-object fingerprint (the 8 bytes after C3 01 in a record).")
final class SchemasCommand implements Callable<Integer> {
    static final List<Class<?>> RECORDS = List.of(TraceSession.class, ContextSwitchBatch.class, ContextSwitch.class, ThreadInfo.class,
            ThreadStats.class, ProcessStats.class, HostStats.class, io.swapstream.schemas.avro.WakeEdge.class);

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

    static List<Version> versions() {
        List<Version> all = new ArrayList<>();
        for (Class<?> type : RECORDS) {
            List<Schema> earlier = SchemaHistory.earlier(type);
            for (int i = 0; i < earlier.size(); i++) all.add(new Version(type.getSimpleName(), i + 1, earlier.get(i)));
            all.add(new Version(type.getSimpleName(), 0, schemaOf(type)));
        }
        return all;
    }

    static Schema schemaOf(Class<?> type) {
        try {
            return (Schema) type.getMethod("getClassSchema").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter w = spec.commandLine().getOut();
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
}
