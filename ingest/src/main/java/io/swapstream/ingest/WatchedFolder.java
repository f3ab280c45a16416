package io.swapstream.ingest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * What a watched folder holds, for the host-side alerts (docs/operations.md "Alerts to set"): the trace files
 * waiting there (the backlog, files and bytes) and, for each host, when its newest file was created. A logger
 * rotated every 10 minutes makes a new file every 10 minutes; a host whose newest file is older than that has
 * stopped collecting. Read on its own, at each scrape: it tells the truth even while Kafka is down and the
 * watcher cannot publish.
 *
 * @param files           the {@code .etl} files directly in the folder
 * @param bytes           their sizes, summed
 * @param newestCreatedMs per host, the creation time of its newest file (ms since the epoch)
 */
public record WatchedFolder(long files, long bytes, Map<String, Long> newestCreatedMs) {
    /** The name of the status file the collection script writes beside the traces (windows/swapstream-collect.ps1). */
    public static final String STATUS_FILE = "swapstream-collector.status";

    /**
     * Lists {@code dir} once. {@code hostOf} names a file's host (the watcher's one host, or the file's name).
     * A file's creation time is its file system's (NTFS keeps it; where a file system has none, Java gives the
     * last modification).
     */
    public static WatchedFolder scan(Path dir, Function<Path, String> hostOf) throws IOException {
        long files = 0, bytes = 0;
        Map<String, Long> newest = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (!p.getFileName().toString().toLowerCase().endsWith(".etl")) continue;
                BasicFileAttributes a;
                try {
                    a = Files.readAttributes(p, BasicFileAttributes.class);
                } catch (NoSuchFileException e) {
                    continue; // deleted since the listing
                }
                if (!a.isRegularFile()) continue;
                files++;
                bytes += a.size();
                newest.merge(hostOf.apply(p), a.creationTime().toMillis(), Math::max);
            }
        }
        return new WatchedFolder(files, bytes, newest);
    }
}
