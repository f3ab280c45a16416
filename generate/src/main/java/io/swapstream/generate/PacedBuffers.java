package io.swapstream.generate;

import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A finished trace's buffers in file order, each with the time its logger wrote it (its header's
 * time stamp), in nanoseconds after the first buffer, the logfile header: what a replay paces by.
 */
public final class PacedBuffers implements AutoCloseable {
    private final EtlReader reader;
    private SessionClock clock;
    private long ts0;
    private long writtenAtNanos;

    private PacedBuffers(EtlReader reader) {
        this.reader = reader;
    }

    public static PacedBuffers open(Path source) throws IOException {
        return new PacedBuffers(EtlReader.open(source).framesOnly());
    }

    /** Moves to the next buffer; false at the file's end. */
    public boolean next() throws IOException {
        if (!reader.next()) return false;
        if (clock == null) {
            LogfileHeader h = LogfileHeader.find(reader.decoder());
            clock = SessionClock.of(h);
            ts0 = h.timestamp();
            writtenAtNanos = 0;
        } else {
            writtenAtNanos = clock.ticksToNanos(reader.header().timeStamp() - ts0);
        }
        return true;
    }

    /** When the logger wrote this buffer, nanoseconds after the first. */
    public long writtenAtNanos() {
        return writtenAtNanos;
    }

    /** The buffer's bytes, valid until the next {@link #next}. */
    public byte[] rawBytes() {
        return reader.rawBytes();
    }

    public int rawLength() {
        return reader.rawLength();
    }

    @Override
    public void close() throws IOException {
        reader.close();
    }
}
