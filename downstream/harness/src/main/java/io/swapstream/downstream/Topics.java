package io.swapstream.downstream;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** What the pipeline wrote, as Swapstream's own {@code tail} reads it, and rows as comparable lines. */
public final class Topics {
    private Topics() {}

    /** A small generated trace run through the pipeline with the registry (the default topic prefix, etw.). */
    public static void runPipeline(Swapstream s, Path dir) throws Exception {
        Path trace = dir.resolve("web01.etl");
        s.ok("generate", "-o", trace.toString(), "--switches", "8000", "--mode", "cswitch");
        s.ok("run", trace.toString(), "-b", s.bootstrap(), "--window", "1s", "--schema-registry", s.registry());
    }

    /** Every record of a topic as {@code tail --from-beginning} prints it (read_committed), one map per record. */
    public static List<Map<String, Object>> tail(Swapstream s, String topicSuffix, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("tail", topicSuffix, "--from-beginning", "-b", s.bootstrap(), "--schema-registry", s.registry()));
        args.addAll(List.of(options));
        Swapstream.Result r = s.ok(args.toArray(String[]::new));
        List<Map<String, Object>> out = new ArrayList<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) out.add(Json.object(line));
        }
        return out;
    }

    /** The fields of a row as one line, null as "null", numbers as Java prints them. */
    public static String line(Object... fields) {
        List<String> parts = new ArrayList<>();
        for (Object f : fields) parts.add(String.valueOf(f));
        return String.join("|", parts);
    }

    /** tail's records as lines of the given fields, sorted. */
    public static List<String> lines(Collection<Map<String, Object>> records, List<String> fields) {
        return records.stream().map(r -> line(fields.stream().map(r::get).toArray())).sorted().collect(Collectors.toList());
    }

    public static Path write(Path file, String text) throws Exception {
        Files.writeString(file, text);
        return file;
    }
}
