package io.swapstream.ingest;

import java.nio.file.Path;

/** A file {@link DirectoryIngest} follows: where it is, whose session it holds, and how far it was published. */
final class WatchedFile {
    Path path;
    /** The file system's identity of the file, to follow it through a rename. */
    Object fileKey;
    String host;
    String session;
    final IngestPosition position = new IngestPosition();
    long size;
    long lastGrowthMs;
    /** Not an ETL file (yet): looked at again only when it grows. */
    String notEtl;
    /** The logger's name and StartTime, from its logfile header: a newer file of the same logger supersedes this one. */
    String logger;
    /** The recording's {@link io.swapstream.etw.LogfileHeader#stream()}, sent with each of its buffers. */
    String stream;
    long startTime;
    /** A newer file of the same logger, once one appears: this one's session ends once all its buffers are out. */
    Path supersededBy;
    boolean saidEmpty;
    boolean disposeFailed;

    /** A file's host when its watcher names none: the file's name without its extension. */
    static String hostOf(Path p) {
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}
