package io.swapstream.batch;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Avro's binary encoding (zig-zag varints, blocked arrays, unions as an index) straight on a byte
 * array, for {@link SwitchBatchSerde}. Written by hand because Avro's encoder and decoder go through
 * a stream and a virtual call per value, which C2 inlines into one very large method per column
 * loop: compiling the batch serde took seconds of a core, and the loops ran slower than these.
 * The reading half: a reader over one record's bytes, with every read checked against its end.
 */
final class AvroBinaryReader {
    private final byte[] b;
    private int pos;
    private final int end;

    AvroBinaryReader(byte[] b, int from, int end) {
        this.b = b;
        this.pos = from;
        this.end = end;
    }

    long readLong() {
        byte[] a = b;
        int p = pos;
        if (end - p >= 10) { // no end inside the longest number: the loop checks nothing but its continuation bits
            int x = a[p++];
            if (x >= 0) { // one byte: most enum, union and small values
                pos = p;
                return (x >>> 1) ^ -(x & 1);
            }
            long n = x & 0x7F;
            for (int shift = 7; shift < 70; shift += 7) {
                x = a[p++];
                n |= (long) (x & 0x7F) << shift;
                if (x >= 0) {
                    pos = p;
                    return (n >>> 1) ^ -(n & 1);
                }
            }
            throw new MalformedAvroException("a number runs past 10 bytes");
        }
        return readLongNearEnd();
    }

    private long readLongNearEnd() {
        long n = 0;
        int shift = 0;
        int p = pos;
        while (true) {
            if (p >= end) throw new MalformedAvroException("the value ends inside a number");
            int x = b[p++];
            n |= (long) (x & 0x7F) << shift;
            if (x >= 0) break;
            shift += 7;
            if (shift > 63) throw new MalformedAvroException("a number runs past 10 bytes");
        }
        pos = p;
        return (n >>> 1) ^ -(n & 1);
    }

    /** A union of null and a number: true for the number's branch (its zig-zag index, 2, is one byte, as is null's 0). */
    private boolean present() {
        if (pos < end) {
            int x = b[pos];
            if (x == 0 || x == 2) {
                pos++;
                return x == 2;
            }
        }
        return index(2) == 1; // the checks' message
    }

    int readInt() {
        long v = readLong();
        if (v != (int) v) throw new MalformedAvroException("an int of " + v);
        return (int) v;
    }

    /** A union branch or enum symbol index. */
    int index(int limit) {
        long v = readLong();
        if (v < 0 || v >= limit) throw new MalformedAvroException("index " + v + " where fewer than " + limit + " are defined");
        return (int) v;
    }

    String string() {
        long n = readLong();
        if (n < 0 || n > end - pos) throw new MalformedAvroException("a string of " + n + " bytes with " + (end - pos) + " left");
        String s = new String(b, pos, (int) n, StandardCharsets.UTF_8);
        pos += (int) n;
        return s;
    }

    /** The next block's item count, 0 at the array's end; a negative count comes with the block's byte size, skipped. */
    long block() {
        long k = readLong();
        if (k < 0) {
            readLong();
            k = -k;
        }
        return k;
    }

    /**
     * Reads an array of exactly n items, calling {@code item} for each in order (for columns
     * read once per batch; the hot ones have loops of their own, which the JIT compiles apart).
     */
    void items(int n, Item item) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            int to = blockEnd(i, k, n);
            while (i < to) item.read(i++);
        }
        expect(i, n);
    }

    private static int blockEnd(int i, long k, int n) {
        if (k > n - i) throw new MalformedAvroException("a column holds more than the batch's " + n + " rows");
        return i + (int) k;
    }

    private static void expect(int i, int n) {
        if (i != n) throw new MalformedAvroException("a column holds " + i + " rows, the batch " + n);
    }

    void ints(int[] v, int n) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) v[i] = readInt();
        }
        expect(i, n);
    }

    void longs(long[] v, int n) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) v[i] = readLong();
        }
        expect(i, n);
    }

    void optionalInts(int[] v, int n, int none) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) v[i] = present() ? readInt() : none;
        }
        expect(i, n);
    }

    void optionalLongs(long[] v, int n, long none) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) v[i] = present() ? readLong() : none;
        }
        expect(i, n);
    }

    void enums(int[] v, int n, int symbols) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) v[i] = index(symbols);
        }
        expect(i, n);
    }

    /** Where the last symbol is Unknown, it reads as {@code unknownValue}. */
    void optionalEnums(int[] v, int n, int none, int symbols, boolean lastIsUnknown, int unknownValue) {
        int unknown = lastIsUnknown ? symbols - 1 : -1;
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            for (int to = blockEnd(i, k, n); i < to; i++) {
                if (!present()) {
                    v[i] = none;
                } else {
                    int x = index(symbols);
                    v[i] = x == unknown ? unknownValue : x;
                }
            }
        }
        expect(i, n);
    }

    /**
     * Reads a presence bitmap of n rows: the offset of its first byte, or -1 when it is empty
     * (no row has a value).
     */
    int bitmap(int n) {
        long len = readLong();
        if (len == 0) return -1;
        if (len != (n + 7) >>> 3 || len > end - pos) throw new MalformedAvroException("a presence bitmap of " + len + " bytes for " + n + " rows");
        int at = pos;
        pos += (int) len;
        return at;
    }

    boolean bit(int bitmap, int i) {
        return bitmap >= 0 && (b[bitmap + (i >>> 3)] & (1 << (i & 7))) != 0;
    }

    /**
     * The row of the next value of a sparse column: walks the bitmap's set bits ({@code cursor}
     * holds the byte's offset from the bitmap and the bits left of it).
     */
    private int nextRow(int bitmap, int n, long[] cursor) {
        long c = cursor[0];
        int at = (int) (c >>> 32);
        int bits = (int) c;
        int bytes = bitmap < 0 ? 0 : (n + 7) >>> 3;
        while (bits == 0) {
            if (++at >= bytes) throw new MalformedAvroException("more values than the presence bitmap marks");
            bits = b[bitmap + at] & 0xFF;
        }
        int row = (at << 3) + Integer.numberOfTrailingZeros(bits);
        if (row >= n) throw new MalformedAvroException("a presence bit past the batch's " + n + " rows");
        cursor[0] = (long) at << 32 | (bits & (bits - 1));
        return row;
    }

    private static void expectNoMoreRows(int bitmap, int n, long[] cursor, byte[] b) {
        int at = (int) (cursor[0] >>> 32);
        boolean left = (int) cursor[0] != 0;
        for (int k = at + 1, bytes = bitmap < 0 ? 0 : (n + 7) >>> 3; k < bytes && !left; k++) left = b[bitmap + k] != 0;
        if (left) throw new MalformedAvroException("fewer values than the presence bitmap marks");
    }

    private final long[] cursor = new long[1];

    /** The present values' array, into the rows the bitmap marks; the others get {@code none}. */
    void sparseInts(int[] v, int n, int none) {
        int bitmap = bitmap(n);
        Arrays.fill(v, 0, n, none);
        cursor[0] = -1L << 32; // before byte 0, no bits
        for (long k = block(); k != 0; k = block()) {
            for (long j = 0; j < k; j++) v[nextRow(bitmap, n, cursor)] = readInt();
        }
        expectNoMoreRows(bitmap, n, cursor, b);
    }

    void sparseLongs(long[] v, int n, long none) {
        int bitmap = bitmap(n);
        Arrays.fill(v, 0, n, none);
        cursor[0] = -1L << 32;
        for (long k = block(); k != 0; k = block()) {
            for (long j = 0; j < k; j++) v[nextRow(bitmap, n, cursor)] = readLong();
        }
        expectNoMoreRows(bitmap, n, cursor, b);
    }

    /** {@link #sparseInts} of enum symbol indexes; where the last symbol is Unknown, it reads as {@code unknownValue}. */
    void sparseEnums(int[] v, int n, int none, int symbols, boolean lastIsUnknown, int unknownValue) {
        sparseInts(v, n, none);
        int unknown = lastIsUnknown ? symbols - 1 : -1;
        for (int i = 0; i < n; i++) {
            int x = v[i];
            if (x == none) continue;
            if (x < 0 || x >= symbols) throw new MalformedAvroException("index " + x + " where fewer than " + symbols + " are defined");
            if (x == unknown) v[i] = unknownValue;
        }
    }

    /** Differences from the row before back to values. */
    void deltas(long[] v, int n) {
        longs(v, n);
        for (int i = 1; i < n; i++) v[i] += v[i - 1];
    }

    /** Reads the rows of an array whose count is unknown ahead, growing {@code into}; returns the count. */
    int intList(int[][] into, int limit) {
        int i = 0;
        for (long k = block(); k != 0; k = block()) {
            if (k > limit - i) throw new MalformedAvroException("a list of more than " + limit + " items");
            if (into[0].length < i + k) into[0] = Arrays.copyOf(into[0], Math.max(into[0].length * 2, (int) (i + k)));
            for (long j = 0; j < k; j++) into[0][i++] = readInt();
        }
        return i;
    }

    boolean atEnd() { return pos == end; }

    /** Reads one item of a column. */
    @FunctionalInterface
    interface Item {
        void read(int i);
    }
}
