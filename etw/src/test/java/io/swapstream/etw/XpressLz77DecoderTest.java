package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Streams built by hand from MS-XCA §2.4; the real compressed files are covered by the inspect test. */
class XpressLz77DecoderTest {

    static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) b[i] = (byte) v[i];
        return b;
    }

    static byte[] decode(byte[] in, int expected) throws Exception {
        byte[] out = new byte[expected];
        XpressLz77Decoder.decode(in, 0, in.length, out, 0, expected);
        return out;
    }

    @Test
    void literalsThenShortMatch() throws Exception {
        // flags 0x10000000: three literals, then a match; match word (distance-1=2)<<3 | (length-3=6) = 0x16
        byte[] in = bytes(0x00, 0x00, 0x00, 0x10, 'a', 'b', 'c', 0x16, 0x00);
        assertArrayEquals("abcabcabcabc".getBytes(StandardCharsets.US_ASCII), decode(in, 12));
    }

    @Test
    void overlappingMatchWithNibbleLength() throws Exception {
        // literal 'a', then match distance 1, length field 7 → nibble 5 → length 5+7+3 = 15
        byte[] in = bytes(0x00, 0x00, 0x00, 0x40, 'a', 0x07, 0x00, 0x05);
        assertArrayEquals("aaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII), decode(in, 16));
    }

    @Test
    void twoLongMatchesShareOneNibbleByte() throws Exception {
        // 'x', match(d1, nibble low 2 → 12), match(d1, nibble high 1 → 11): 1 + 12 + 11 = 24 bytes
        byte[] in = bytes(0x00, 0x00, 0x00, 0x60, 'x', 0x07, 0x00, 0x12, 0x07, 0x00);
        assertArrayEquals("x".repeat(24).getBytes(StandardCharsets.US_ASCII), decode(in, 24));
    }

    @Test
    void byteExtendedLength() throws Exception {
        // nibble 15 → next byte 20 → length 20 + 15 + 7 + 3 = 45
        byte[] in = bytes(0x00, 0x00, 0x00, 0x40, 'z', 0x07, 0x00, 0x0F, 20);
        assertArrayEquals("z".repeat(46).getBytes(StandardCharsets.US_ASCII), decode(in, 46));
    }

    @Test
    void matchBeforeOutputStartIsCorrupt() {
        byte[] in = bytes(0x00, 0x00, 0x00, 0x80, 0x48, 0x00);
        assertThrows(XpressLz77Decoder.CorruptInputException.class, () -> decode(in, 8));
    }

    @Test
    void inputEndingEarlyIsCorrupt() {
        byte[] in = bytes(0x00, 0x00, 0x00, 0x00, 'a', 'b');
        assertThrows(XpressLz77Decoder.CorruptInputException.class, () -> decode(in, 5));
    }

    @Test
    void matchPastExpectedSizeIsCorrupt() {
        byte[] in = bytes(0x00, 0x00, 0x00, 0x10, 'a', 'b', 'c', 0x16, 0x00);
        assertThrows(XpressLz77Decoder.CorruptInputException.class, () -> decode(in, 8));
    }

    /** 'a', then a match of distance 1 whose length takes the 32-bit form, {@code length32}. */
    static byte[] longMatch(long length32) {
        int v = (int) length32;
        return bytes(0x00, 0x00, 0x00, 0x40, 'a', 0x07, 0x00, 0x0F, 0xFF, 0x00, 0x00,
                v & 0xFF, v >>> 8 & 0xFF, v >>> 16 & 0xFF, v >>> 24 & 0xFF);
    }

    @Test
    void thirtyTwoBitLengthsThatWouldWrapAnIntAreCorrupt() {
        // 0x7FFFFFFD + 3 wraps past Integer.MAX_VALUE: once an ArrayIndexOutOfBoundsException
        for (long n : new long[] {0x7FFFFFFDL, 0x7FFFFFFEL, 0x7FFFFFFFL, 0x80000000L, 0xFFFFFFFFL}) {
            XpressLz77Decoder.CorruptInputException e = assertThrows(XpressLz77Decoder.CorruptInputException.class,
                    () -> decode(longMatch(n), 4096), Long.toHexString(n));
            assertTrue(e.getMessage().contains("runs past the expected size 4096"), e.getMessage());
            assertEquals(11, e.inputOffset, "the 32-bit length's own offset");
        }
    }

    @Test
    void thirtyTwoBitLengthsTooShortForTheirFormAreCorrupt() {
        for (long n : new long[] {0, 1, 21}) {
            assertThrows(XpressLz77Decoder.CorruptInputException.class, () -> decode(longMatch(n), 4096), Long.toString(n));
        }
    }

    @Test
    void aThirtyTwoBitLengthThatFitsIsDecoded() throws Exception {
        // 2^16 + 22 bytes: the 32-bit form carries the length with the 15 + 7 already in it, then + 3
        int n = (1 << 16) + 22;
        assertArrayEquals("a".repeat(1 + n + 3).getBytes(StandardCharsets.US_ASCII), decode(longMatch(n), 1 + n + 3));
    }

    @Test
    void everyPrefixOfAStreamFailsCleanly() {
        byte[] whole = longMatch(0x7FFFFFFFL);
        for (int i = 0; i < whole.length; i++) {
            byte[] cut = java.util.Arrays.copyOf(whole, i);
            assertThrows(XpressLz77Decoder.CorruptInputException.class, () -> decode(cut, 64), "cut at " + cut.length);
        }
    }
}
