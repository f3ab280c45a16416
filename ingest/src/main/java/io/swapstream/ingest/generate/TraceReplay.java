package io.swapstream.ingest.generate;

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
            while (r.next()) {
                long wait = start + (long) (r.writtenAtNanos() / speed) - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                int half = r.rawLength() / 2;
                ByteBuffer b = ByteBuffer.wrap(r.rawBytes(), 0, half);
                while (b.hasRemaining()) out.write(b);
                b = ByteBuffer.wrap(r.rawBytes(), half, r.rawLength() - half);
                while (b.hasRemaining()) out.write(b);
                if (listener != null) {
                    long before = System.nanoTime();
                    listener.written(i, r.writtenAtNanos());
                    start += System.nanoTime() - before;
                }
                i++;
            }
        }
    }
}
