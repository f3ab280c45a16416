package io.swapstream.bench;

import io.swapstream.generate.PacedBuffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/** One host's trace being written: its next buffer and when it is due. */
final class HostWriting {
    final PacedBuffers buffers;
    final Path target;
    long dueNanos;
    byte[] next;

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
    }
}
