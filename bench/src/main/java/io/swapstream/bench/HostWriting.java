package io.swapstream.bench;

import io.swapstream.etw.BufferHeader;
import io.swapstream.export.RangeExport;
import io.swapstream.generate.PacedBuffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * One host's trace being written: its next buffer and when it is due. The run ends part way into the trace, so
 * {@link #stop} ends the file as its logger would when stopped then: its header gets the EndTime and the buffers written.
 */
final class HostWriting {
    final PacedBuffers buffers;
    final Path target;
    long dueNanos;
    byte[] next;
    private int written;
    private long lastTimestamp = Long.MIN_VALUE;

    HostWriting(Path source, Path target) throws IOException {
        this.buffers = PacedBuffers.open(source);
        this.target = target;
    }

    /** Reads the next buffer due by {@code endNanos}; false when there is none. */
    boolean advance(long start, long endNanos) throws IOException {
        if (!buffers.next()) return false;
        dueNanos = start + buffers.writtenAtNanos();
        if (dueNanos > endNanos) return false;
        next = Arrays.copyOf(buffers.rawBytes(), buffers.rawLength());
        return true;
    }

    void append() throws IOException {
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer b = ByteBuffer.wrap(next);
            while (b.hasRemaining()) out.write(b);
        }
        written++;
        lastTimestamp = Math.max(lastTimestamp, BufferHeader.read(ByteBuffer.wrap(next).order(java.nio.ByteOrder.LITTLE_ENDIAN), 0, 0).timeStamp());
    }

    /** The logger stops: the first buffer's logfile header is rewritten with the buffers written and the last one's time. */
    void stop() throws IOException {
        buffers.close();
        if (written > 0) RangeExport.finishHeader(target, written, lastTimestamp);
    }
}
