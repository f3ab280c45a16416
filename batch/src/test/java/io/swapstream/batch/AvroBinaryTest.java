package io.swapstream.batch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.Test;

/** The hand-written varints against Avro's own encoder: every length, and both ends of a record. */
class AvroBinaryTest {
    /** Each length's bounds (1 to 10 bytes after zig-zag), both signs, and a spread of others. */
    private static long[] values() {
        LongStream.Builder v = LongStream.builder();
        for (int bits = 0; bits < 64; bits++) {
            long p = 1L << bits;
            for (long x : new long[] {p - 1, p, p + 1, -p, -p - 1, -p + 1}) v.add(x);
        }
        v.add(Long.MAX_VALUE).add(Long.MIN_VALUE).add(0).add(1_700_000_000_123_456_789L).add(-1_700_000_000_123_456_789L);
        SplittableRandom r = new SplittableRandom(11);
        for (int i = 0; i < 20_000; i++) v.add(r.nextLong() >> r.nextInt(64));
        return v.build().toArray();
    }

    private static byte[] avro(long[] values) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder e = EncoderFactory.get().directBinaryEncoder(out, null);
        for (long x : values) e.writeLong(x);
        e.flush();
        return out.toByteArray();
    }

    @Test
    void writesAvrosBytesForEveryLength() throws IOException {
        long[] v = values();
        AvroBinaryWriter w = new AvroBinaryWriter();
        for (long x : v) w.writeLong(x);
        assertArrayEquals(avro(v), w.toByteArray());
    }

    @Test
    void readsAvrosBytesBackWhereverTheRecordEnds() throws IOException {
        long[] v = values();
        byte[] bytes = avro(v);
        // the record's end right after its bytes: the last numbers are read near the end, byte by byte
        AvroBinaryReader r = new AvroBinaryReader(bytes, 0, bytes.length);
        long[] back = new long[v.length];
        for (int i = 0; i < v.length; i++) back[i] = r.readLong();
        assertArrayEquals(v, back);
        assertEquals(true, r.atEnd());
        // and each number alone, the only one in its record, at an offset with other bytes around it
        for (long x : Arrays.copyOf(v, 400)) {
            byte[] one = avro(new long[] {x});
            byte[] padded = new byte[one.length + 20];
            Arrays.fill(padded, (byte) 0xFF);
            System.arraycopy(one, 0, padded, 3, one.length);
            assertEquals(x, new AvroBinaryReader(padded, 3, 3 + one.length).readLong());
            assertEquals(x, new AvroBinaryReader(padded, 3, padded.length).readLong());
        }
    }

    @Test
    void aNumberOfMoreThanTenBytesIsRefused() {
        byte[] b = new byte[16];
        Arrays.fill(b, (byte) 0x80);
        assertThrows(MalformedAvroException.class, () -> new AvroBinaryReader(b, 0, b.length).readLong());
        assertThrows(MalformedAvroException.class, () -> new AvroBinaryReader(b, 0, 10).readLong());
    }
}
