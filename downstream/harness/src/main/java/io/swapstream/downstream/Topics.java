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
        // the same without the registry: single-object records, under the topic prefix so.
        s.ok("run", trace.toString(), "-b", s.bootstrap(), "--window", "1s", "--topic-prefix", SINGLE_OBJECT_PREFIX);
    }

    /** The topic prefix of the pipeline's run without the registry. */
    public static final String SINGLE_OBJECT_PREFIX = "so.";

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

    /** The topics a reader is pointed at (the default prefix), and the tail options that print each record as stored. */
    public static final Map<String, List<String>> RECORD_TOPICS = Map.of(
            "sessions", List.of(), "switch-batches", List.of("--stored"), "threads", List.of(), "thread-stats", List.of(),
            "process-stats", List.of(), "host-stats", List.of(), "wake-edges", List.of());

    /**
     * Two records of one topic read back, the current schema's and an earlier version's: the earlier one as a reader
     * should give it (the current one's fields less those the earlier version lacks), what it gave, and the fields
     * the earlier version lacks, which it should give as null.
     */
    public record Versions(Map<String, Object> expected, Map<String, Object> older, List<String> later) {
        public static Versions of(Map<String, Object> a, Map<String, Object> b, java.util.function.Predicate<String> earlierHas) {
            Map<String, Object> whole = a.size() >= b.size() ? a : b;
            Map<String, Object> older = whole == a ? b : a;
            Map<String, Object> expected = new java.util.TreeMap<>(whole);
            List<String> later = new ArrayList<>();
            for (String field : whole.keySet()) {
                if (!earlierHas.test(field)) {
                    expected.remove(field);
                    later.add(field);
                }
            }
            return new Versions(expected, older, later);
        }
    }

    /**
     * A record (parsed JSON, or maps and lists a reader built) in one form for comparing: a field that is null or
     * absent is left out, integers are Long, other numbers Double, bytes base64 (as tail prints them).
     */
    public static Object canonical(Object v) {
        if (v instanceof Map<?, ?> m) {
            java.util.TreeMap<String, Object> out = new java.util.TreeMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                Object c = canonical(e.getValue());
                if (c != null) out.put(String.valueOf(e.getKey()), c);
            }
            return out;
        }
        if (v instanceof List<?> l) return l.stream().map(Topics::canonical).collect(Collectors.toList());
        if (v instanceof Object[] a) return canonical(java.util.Arrays.asList(a));
        if (v instanceof byte[] b) return java.util.Base64.getEncoder().encodeToString(b);
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) return ((Number) v).longValue();
        if (v instanceof Float f) return f.doubleValue();
        if (v instanceof CharSequence c) return c.toString();
        return v;
    }

    /** Records in canonical form, as sorted lines. */
    public static List<String> canonicalLines(Collection<?> records) {
        return records.stream().map(r -> String.valueOf(canonical(r))).sorted().collect(Collectors.toList());
    }

    public static Path write(Path file, String text) throws Exception {
        Files.writeString(file, text);
        return file;
    }
}
