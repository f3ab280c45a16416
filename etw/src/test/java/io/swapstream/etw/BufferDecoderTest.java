package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The bounds on what compressed buffers may expand to; the format itself is covered by the real files' tests. */
class BufferDecoderTest {

    /**
     * A compressed buffer of 88 bytes that claims {@code fill} bytes of zeros: one literal, then one match of
     * distance 1 whose length takes the 32-bit form.
     */
    static byte[] zeros(int fill) {
        ByteBuffer b = ByteBuffer.allocate(88).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 88).putInt(0x30, fill).putShort(0x34, (short) BufferHeader.FLAG_COMPRESSED)
                .putShort(0x36, (short) BufferHeader.TYPE_GENERIC);
        int match = fill - BufferHeader.SIZE - 1 - 3; // the length the match carries
        b.putInt(0x48, 0x40000000).put(0x4C, (byte) 0).putShort(0x4D, (short) 7).put(0x4F, (byte) 0x0F).put(0x50, (byte) 0xFF)
                .putShort(0x51, (short) 0).putInt(0x53, match);
        return b.array();
    }

    @Test
    void aCompressedBufferExpandsToWhatItClaims() {
        BufferDecoder d = new BufferDecoder();
        d.load("z", 0, zeros(4096), 0, 88);
        assertEquals(4096, d.header().fillMark());
        for (int i = BufferHeader.SIZE; i < 4096; i++) assertEquals(0, d.data().get(i));
    }

    @Test
    void aBufferClaimingMoreThanAnyLoggerWritesIsRefusedBeforeAnyWork() {
        EtlFormatException e = assertThrows(EtlFormatException.class,
                () -> new BufferDecoder().load("bomb.etl", 4096, zeros(64 << 20), 0, 88));
        assertEquals(4096 + 0x30, e.offset());
        assertTrue(e.getMessage().startsWith("bomb.etl: byte offset 4144"), e.getMessage());
    }

    @Test
    void aBufferClaimingMoreThanItsLoggersBufferSizeIsRefused() {
        BufferDecoder d = new BufferDecoder();
        d.loggerBufferSize(64 * 1024);
        d.load("z", 0, zeros(64 * 1024), 0, 88);
        EtlFormatException e = assertThrows(EtlFormatException.class, () -> d.load("z", 88, zeros(64 * 1024 + 8), 0, 88));
        assertTrue(e.reason().contains("more than its logger's buffer size 65536"), e.getMessage());
    }

    @Test
    void buffersExpandingPastTheBoundAreRefusedAsABomb() {
        BufferDecoder d = new BufferDecoder();
        d.loggerBufferSize(64 * 1024);
        long expanded = 0;
        int taken = 0;
        EtlFormatException refused = null;
        for (int i = 0; i < 10_000 && refused == null; i++) {
            try {
                d.load("bomb.etl", (long) i * 88, zeros(64 * 1024), 0, 88);
                expanded += 64 * 1024;
                taken++;
            } catch (EtlFormatException e) {
                refused = e;
            }
        }
        assertTrue(refused != null && refused.reason().contains("decompression bomb"), String.valueOf(refused));
        // the bound: 64 times the bytes taken, and two whole buffers
        assertTrue(expanded <= BufferDecoder.MAX_EXPANSION * 88L * (taken + 1) + 2 * 64 * 1024, expanded + " from " + taken);
        // a refused buffer stays refused, and costs nothing more
        assertThrows(EtlFormatException.class, () -> d.load("bomb.etl", 0, zeros(64 * 1024), 0, 88));
    }
}
