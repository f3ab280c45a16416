package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BufferFillerTest {
    private static final int SIZE = 4096;
    @TempDir Path dir;
    private byte[] file;

    @BeforeEach
    void writeTrace() throws Exception {
        Path f = dir.resolve("w.etl");
        EtlWriter.Session s = new EtlWriter.Session(SIZE, 22621, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                132223104000000000L, 132223000000000000L, 1, "L", "f.etl");
        try (EtlWriter w = new EtlWriter(f, s, 1000)) {
            for (int i = 0; i < 300; i++) w.perfInfoEvent(i % 2, 0x0524, 4, 1000 + i, null, null, new byte[24], 24);
        }
        file = Files.readAllBytes(f);
    }

    private byte[] buffer(int at) {
        return Arrays.copyOfRange(file, at, at + SIZE);
    }

    private static int fillMark(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt(0x30);
    }

    /** Offset, hook and timestamp of every event the decoder walks. */
    private static List<String> events(BufferDecoder d) {
        List<String> seen = new ArrayList<>();
        d.walk(ev -> seen.add(ev.offset() + "/" + ev.hookId() + "/" + ev.timestamp()));
        return seen;
    }

    @Test
    void aBufferIsPublishedUpToItsFillMarkAndDecodesAndRestoresAsTheWholeOne() {
        int buffers = 0;
        for (int at = 0; at < file.length; at += SIZE) {
            byte[] whole = buffer(at);
            int fill = fillMark(whole);
            assertTrue(fill < SIZE, "buffer at " + at + " has room left");
            int n = BufferFiller.publishedLength(whole, SIZE, BufferHeader.read(whole, at));
            assertEquals(fill, n, "buffer at " + at);
            byte[] published = Arrays.copyOf(whole, n);

            BufferDecoder a = new BufferDecoder();
            a.load("t", at, whole, 0, SIZE);
            BufferDecoder b = new BufferDecoder();
            b.loadPublished("t", at, published, 0, published.length);
            List<String> expected = events(a);
            assertEquals(expected, events(b), "buffer at " + at);
            assertArrayEquals(whole, BufferFiller.restore(published, SIZE), "buffer at " + at);
            if (at > 0) assertTrue(!expected.isEmpty(), "buffer at " + at + " holds events");
            buffers++;
        }
        assertTrue(buffers > 3, buffers + " buffers");
    }

    @Test
    void aBufferWhoseRoomIsNotAllFillerIsPublishedWhole() {
        byte[] b = buffer(SIZE);
        int fill = fillMark(b);
        for (int i : new int[] {fill, (fill + SIZE) / 2, SIZE - 1}) {
            byte[] changed = b.clone();
            changed[i] = 0;
            assertEquals(SIZE, BufferFiller.publishedLength(changed, SIZE, BufferHeader.read(changed, 0)), "a zero at " + i);
        }
        byte[] compressed = b.clone();
        compressed[0x34] |= BufferHeader.FLAG_COMPRESSED;
        assertEquals(SIZE, BufferFiller.publishedLength(compressed, SIZE, BufferHeader.read(compressed, 0)));
    }

    @Test
    void aPublishedBufferShorterThanItsFillMarkIsTruncatedAndTheFileReaderWantsItWhole() {
        byte[] b = buffer(SIZE);
        int fill = fillMark(b);
        byte[] cut = Arrays.copyOf(b, fill - 1);
        EtlFormatException e = assertThrows(EtlFormatException.class,
                () -> new BufferDecoder().loadPublished("t.etl", SIZE, cut, 0, cut.length));
        long at = SIZE + fill - 1;
        assertEquals("t.etl: byte offset " + at + " (0x" + Long.toHexString(at) + "): buffer of " + (fill - 1) + " bytes ends before its fill mark "
                + fill + ": truncated", e.getMessage());
        byte[] published = Arrays.copyOf(b, fill);
        e = assertThrows(EtlFormatException.class, () -> new BufferDecoder().load("t.etl", SIZE, published, 0, published.length));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }
}
