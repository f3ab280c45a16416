package io.swapstream.etw;

import java.util.Arrays;

/**
 * The room past an uncompressed buffer's fill mark, which the kernel fills with 0xFF (every buffer
 * with room left in the 19 real files; RealFileEventsTest checks them). A publisher sends a buffer up to
 * its fill mark when the rest is that filler, and whole otherwise: the file's bytes come back by
 * padding the record with 0xFF to the header's BufferSize, and the flush timer's mostly empty
 * buffers do not cross Kafka as filler.
 */
public final class BufferFiller {
    public static final byte FILL = (byte) 0xFF;
    private static final byte[] FILLER = filled(64 * 1024);

    private BufferFiller() {}

    private static byte[] filled(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, FILL);
        return b;
    }

    /**
     * How many of the {@code length} bytes of the buffer at the start of {@code raw} a publisher sends:
     * its fill mark when every byte from there to {@code length} is filler, else {@code length}.
     */
    public static int publishedLength(byte[] raw, int length, BufferHeader h) {
        int fill = h.fillMark();
        if (h.compressed() || fill < BufferHeader.SIZE || fill >= length) return length;
        for (int at = fill; at < length; at += FILLER.length) {
            int n = Math.min(FILLER.length, length - at);
            if (Arrays.mismatch(raw, at, at + n, FILLER, 0, n) >= 0) return length;
        }
        return fill;
    }

    /** The bytes a publisher sends of the buffer at the start of {@code raw}: a copy of its {@link #publishedLength}. */
    public static byte[] published(byte[] raw, int length, BufferHeader h) {
        return Arrays.copyOf(raw, publishedLength(raw, length, h));
    }

    /** The buffer as in its file: a published record padded with filler to {@code bufferSize}. */
    public static byte[] restore(byte[] published, int bufferSize) {
        if (published.length >= bufferSize) return published;
        byte[] b = Arrays.copyOf(published, bufferSize);
        Arrays.fill(b, published.length, bufferSize, FILL);
        return b;
    }
}
