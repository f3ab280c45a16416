package io.swapstream.ingest;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@code ingest --watch} does with a file once its session has ended and the end marker is committed:
 * keep it, delete it, or move it to a folder (which it does not follow).
 *
 * @param target the folder for {@link Action#MOVE}, else null
 */
public record AfterPublish(Action action, Path target) {
    public enum Action { KEEP, DELETE, MOVE }

    public static final AfterPublish KEEP = new AfterPublish(Action.KEEP, null);

    /** {@code keep}, {@code delete} or {@code move:DIR}. */
    public static AfterPublish parse(String s) {
        if (s.equals("keep")) return KEEP;
        if (s.equals("delete")) return new AfterPublish(Action.DELETE, null);
        if (s.startsWith("move:") && s.length() > 5) return new AfterPublish(Action.MOVE, Path.of(s.substring(5)));
        throw new IllegalArgumentException("--after-publish: '" + s + "' is not keep, delete or move:DIR");
    }

    /** Does it to {@code file}; what it did, for the log, or null for nothing. */
    String apply(Path file) throws IOException {
        switch (action) {
            case DELETE -> {
                Files.deleteIfExists(file);
                return "deleted";
            }
            case MOVE -> {
                Files.createDirectories(target);
                String name = file.getFileName().toString();
                for (int n = 1; ; n++) {
                    Path to = target.resolve(n == 1 ? name : name + "." + n);
                    try {
                        Files.move(file, to);
                        return "moved to " + to;
                    } catch (FileAlreadyExistsException e) {
                        // an earlier file of that name: keep both
                    }
                }
            }
            default -> {
                return null;
            }
        }
    }
}
