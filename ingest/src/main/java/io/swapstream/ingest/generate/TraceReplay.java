package io.swapstream.ingest.generate;

import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes a finished trace into another file buffer by buffer as its logger would have, each buffer
 * when its flush time comes, {@code speed} times faster than the trace ran: a growing trace, for
 * {@code ingest --watch}. A buffer is written in two halves, so a reader sees half-written ones.
 */
public final class TraceReplay {
    private TraceReplay() {}

    /** Wall-clock nanoseconds since the replay began when buffer {@code i} had been written. */
    public interface Listener {
        void written(int buffer, long traceNanos);
    }

    public static void replay(Path source, Path target, double speed, Listener listener) throws IOException, InterruptedException {
        if (!(speed > 0)) throw new IllegalArgumentException("speed must be more than 0");
        long start = System.nanoTime();
        try (EtlReader r = EtlReader.open(source).framesOnly();
             FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.TRUNCATE_EXISTING)) {
            SessionClock clock = null;
            long ts0 = 0;
            int i = 0;
            while (r.next()) {
                long traceNanos = 0;
                if (clock == null) {
                    LogfileHeader h = LogfileHeader.find(r.decoder());
                    clock = SessionClock.of(h);
                    ts0 = h.timestamp();
                } else {
                    traceNanos = clock.ticksToNanos(r.header().timeStamp() - ts0);
                    long due = start + (long) (traceNanos / speed);
                    long wait = due - System.nanoTime();
                    if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                int half = r.rawLength() / 2;
                ByteBuffer b = ByteBuffer.wrap(r.rawBytes(), 0, half);
                while (b.hasRemaining()) out.write(b);
                b = ByteBuffer.wrap(r.rawBytes(), half, r.rawLength() - half);
                while (b.hasRemaining()) out.write(b);
                if (listener != null) listener.written(i, traceNanos);
                i++;
            }
        }
    }
}
