package io.swapstream.generate;

import io.swapstream.etw.LogfileHeaderBytes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes a finished trace into another file buffer by buffer as its logger would have, each buffer
 * when its flush time comes, {@code speed} times faster than the trace ran: a growing trace, for
 * {@code ingest --watch}. A buffer is written in two halves, so a reader sees half-written ones. As a
 * logger does, it starts the file with a logfile header that has no EndTime and counts only itself,
 * and rewrites it with the finished one at the end (docs/architecture.md "Incomplete sessions").
 */
public final class TraceReplay {
    private TraceReplay() {}

    /**
     * Told of each buffer once it is written. The replay waits for it, and the trace's time stands still
     * meanwhile: a listener that blocks pauses the logger, which then goes on at its pace, not in a burst.
     */
    public interface Listener {
        void written(int buffer, long traceNanos) throws InterruptedException;
    }

    public static void replay(Path source, Path target, double speed, Listener listener) throws IOException, InterruptedException {
        if (!(speed > 0)) throw new IllegalArgumentException("speed must be more than 0");
        long start = System.nanoTime();
        try (PacedBuffers r = PacedBuffers.open(source);
             FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.TRUNCATE_EXISTING)) {
            int i = 0;
            byte[] finished = null;
            while (r.next()) {
                long wait = start + (long) (r.writtenAtNanos() / speed) - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                byte[] bytes = r.rawBytes();
                if (i == 0) {
                    finished = java.util.Arrays.copyOf(bytes, r.rawLength());
                    bytes = asStarted(finished);
                }
                int half = r.rawLength() / 2;
                ByteBuffer b = ByteBuffer.wrap(bytes, 0, half);
                while (b.hasRemaining()) out.write(b);
                b = ByteBuffer.wrap(bytes, half, r.rawLength() - half);
                while (b.hasRemaining()) out.write(b);
                if (listener != null) {
                    long before = System.nanoTime();
                    listener.written(i, r.writtenAtNanos());
                    start += System.nanoTime() - before;
                }
                i++;
            }
            if (finished != null) {
                ByteBuffer b = ByteBuffer.wrap(finished);
                long at = 0;
                while (b.hasRemaining()) at += out.write(b, at);
            }
        }
    }

    /** The first buffer {@code finished} as its logger wrote it at the start: no EndTime, one buffer written. */
    static byte[] asStarted(byte[] finished) {
        byte[] started = finished.clone();
        LogfileHeaderBytes h = LogfileHeaderBytes.locate("replay", started);
        if (h != null) h.endTime(0).buffersWritten(1);
        return started;
    }
}
