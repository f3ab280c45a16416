package io.swapstream.export;

import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The flight recorder's writer: a host's minute as {@code export --host H --from T --to T2} writes it, a file for each
 * session of the host with a buffer in the minute, to {@code DIR/HOST/MINUTE_START.etl} (MINUTE the range's start in
 * UTC, ISO-8601 basic, {@code 20261128T140300Z}; START the session's start, as the whole-session archive names its
 * files).
 *
 * <p>Exactly once across restarts, as the whole-session archive: a file is written to its name with {@code .part} on
 * the end and renamed; a file that is there is not written again, and a {@code .part} left by a killed run is deleted
 * and written again. The caller commits its offset past the roll-up row only after the files are there.
 */
public final class MinuteArchive {
    /** What a file is called while it is written, before its rename. */
    public static final String PART = ".part";

    static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    private final Path dir;
    private final RawSessionReader reader;
    private final PrintWriter err;

    public MinuteArchive(Path dir, RawSessionReader reader, PrintWriter err) {
        this.dir = dir;
        this.reader = reader;
        this.err = err;
    }

    /** The file {@code session}'s part of the range from {@code fromNanos} goes to, in DIR/HOST. */
    public static String fileName(long fromNanos, String session) {
        String start = session.substring(session.lastIndexOf(':') + 1);
        return MINUTE.format(Instant.ofEpochSecond(0, fromNanos)) + "_" + start + ".etl";
    }

    /** Writes each session's part of {@code m} that is not archived yet; returns the files written. */
    public int archive(FlightRecorder.Minute m, String why) throws IOException {
        Path hostDir = dir.resolve(m.host());
        var sessions = reader.sessionsOf(m.host(), Math.floorDiv(m.fromNanos(), 1_000_000), Math.floorDiv(m.toNanos(), 1_000_000));
        int written = 0;
        int held = 0;
        boolean refused = false;
        for (String session : sessions) {
            Path target = hostDir.resolve(fileName(m.fromNanos(), session));
            if (Files.exists(target)) {
                // kept before a restart, or as the minute before another
                err.println("swapstream archive: " + m.host() + " from " + Instant.ofEpochSecond(0, m.fromNanos()) + " of " + session
                        + ": kept before as " + target);
                err.flush();
                held++;
                continue;
            }
            try {
                RangeExport.Plan plan = RangeExport.plan(reader, session, false, m.fromNanos(), m.toNanos());
                if (plan.inRange() == 0) continue; // the session has no event in this minute
                Files.createDirectories(hostDir);
                Path part = hostDir.resolve(target.getFileName() + PART);
                if (Files.deleteIfExists(part)) err.println("swapstream archive: " + part + ": left by an earlier run; written again");
                long buffers;
                try (FileChannel ch = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                     OutputStream out = new java.io.BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16)) {
                    buffers = RangeExport.write(reader, session, false, plan, out);
                    ch.force(true);
                } catch (IOException | RuntimeException e) {
                    Files.deleteIfExists(part);
                    throw e;
                }
                Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
                err.println("swapstream archive: kept " + m.host() + " from " + Instant.ofEpochSecond(0, m.fromNanos()) + " to "
                        + Instant.ofEpochSecond(0, m.toNanos()) + " (" + why + ") of " + session + " as " + target + " (" + buffers
                        + " buffers, " + plan.inRange() + " with events in the range)");
                written++;
                held++;
            } catch (RawSessionReader.Unavailable e) {
                refused = true;
                err.println("swapstream archive: " + m.host() + " from " + Instant.ofEpochSecond(0, m.fromNanos()) + " not kept: "
                        + e.getMessage());
            }
            err.flush();
        }
        if (held == 0 && !refused) {
            // said, so that a roll-up row of a host whose buffers retention took is not a silent gap
            err.println("swapstream archive: " + m.host() + " from " + Instant.ofEpochSecond(0, m.fromNanos()) + " to "
                    + Instant.ofEpochSecond(0, m.toNanos()) + " (" + why + "): no buffer of it in that range on " + reader.topic() + "; nothing kept");
            err.flush();
        }
        return written;
    }
}
