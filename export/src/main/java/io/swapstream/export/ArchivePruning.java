package io.swapstream.export;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * What {@code archive --keep} and {@code --max-size} take out of the archive's folder: the {@code .etl} files in it and
 * in its host folders (DIR/HOST/*.etl; a {@code .part} being written is never one), by the time each was written (its
 * last-modified time), oldest first. A file older than {@code keepMs} goes; then, oldest first, files go while the
 * folder's files together hold more than {@code maxBytes}.
 *
 * @param keepMs   how long a file stays, in milliseconds; negative: no age limit
 * @param maxBytes the most the files may hold together; null: no size limit
 */
public record ArchivePruning(long keepMs, Long maxBytes) {
    public static final ArchivePruning NONE = new ArchivePruning(-1, null);

    /** One file deleted, and whether it went for its age (else for the folder's size). */
    public record Deleted(Path file, boolean forAge) {}

    public boolean prunes() {
        return keepMs >= 0 || maxBytes != null;
    }

    /** Deletes what goes from {@code dir} as of {@code nowMs}; tells {@code deleted} of each file, in the order deleted. */
    public List<Deleted> prune(Path dir, long nowMs, Consumer<Deleted> deleted) throws IOException {
        List<Deleted> out = new ArrayList<>();
        if (!prunes() || !Files.isDirectory(dir)) return out;
        record Archived(Path path, long modifiedMs, long bytes) {}
        List<Archived> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir, 2)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (!p.getFileName().toString().endsWith(".etl") || !Files.isRegularFile(p)) continue;
                try {
                    files.add(new Archived(p, Files.getLastModifiedTime(p).toMillis(), Files.size(p)));
                } catch (NoSuchFileException gone) {
                    // deleted by someone else since the walk saw it
                }
            }
        }
        // by age, then by name: files written in the same millisecond still go in one order every time
        files.sort(Comparator.comparingLong(Archived::modifiedMs).thenComparing(a -> a.path().toString()));
        long total = files.stream().mapToLong(Archived::bytes).sum();
        for (Archived a : files) {
            boolean old = keepMs >= 0 && nowMs - a.modifiedMs() > keepMs;
            boolean over = maxBytes != null && total > maxBytes;
            if (!old && !over) continue;
            Files.deleteIfExists(a.path());
            total -= a.bytes();
            Deleted d = new Deleted(a.path(), old);
            out.add(d);
            deleted.accept(d);
        }
        return out;
    }
}
