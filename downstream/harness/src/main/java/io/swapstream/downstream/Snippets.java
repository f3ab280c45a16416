package io.swapstream.downstream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The code blocks of docs/reading-the-topics.md that tests run: a block follows a line
 * {@code <!-- snippet: NAME -->}, so the text a reader copies is the text a test ran.
 */
public final class Snippets {
    private Snippets() {}

    public static Path doc() {
        return Swapstream.root().resolve("docs").resolve("reading-the-topics.md");
    }

    /** The block after {@code <!-- snippet: name -->}, its fences left out. */
    public static String get(String name) throws IOException {
        List<String> lines = Files.readAllLines(doc(), StandardCharsets.UTF_8);
        String marker = "<!-- snippet: " + name + " -->";
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).trim().equals(marker)) continue;
            int open = i + 1;
            if (open >= lines.size() || !lines.get(open).startsWith("```")) {
                throw new IllegalStateException(doc() + ": " + marker + " is not followed by a code block");
            }
            List<String> body = new ArrayList<>();
            for (int j = open + 1; j < lines.size(); j++) {
                if (lines.get(j).startsWith("```")) return String.join("\n", body) + "\n";
                body.add(lines.get(j));
            }
            throw new IllegalStateException(doc() + ": the block after " + marker + " does not end");
        }
        throw new IllegalStateException(doc() + " has no " + marker);
    }

    /** The block with the docs' placeholders (kafka:9092, http://registry:8080) replaced by where the test's run. */
    public static String get(String name, String bootstrap, String registryRoot) throws IOException {
        String text = get(name);
        for (String placeholder : List.of("kafka:9092", "http://registry:8080")) {
            if (!text.contains(placeholder)) throw new IllegalStateException("snippet " + name + " does not name " + placeholder);
        }
        return text.replace("kafka:9092", bootstrap).replace("http://registry:8080", registryRoot);
    }

    /** SQL statements: split at a ';' ending a line, with '--' comment lines left out. */
    public static List<String> statements(String sql) {
        List<String> out = new ArrayList<>();
        StringBuilder b = new StringBuilder();
        for (String line : sql.split("\n")) {
            if (line.trim().startsWith("--")) continue;
            b.append(line).append('\n');
            if (line.trim().endsWith(";")) {
                String st = b.toString().trim();
                out.add(st.substring(0, st.length() - 1));
                b.setLength(0);
            }
        }
        if (!b.toString().isBlank()) out.add(b.toString().trim());
        return out;
    }
}
