package io.swapstream.batch;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Avro's binary encoding (zig-zag varints, blocked arrays, unions as an index) straight on a byte
 * array, for {@link SwitchBatchSerde}. Written by hand because Avro's encoder and decoder go through
 * a stream and a virtual call per value, which C2 inlines into one very large method per column
 * loop: compiling the batch serde took seconds of a core, and the loops ran slower than these.
 * The writing half: a growing output, reused from record to record.
 */
final class AvroBinaryWriter {
    byte[] buf = new byte[64 * 1024];
    int pos;
    /** Scratch: which rows of a long column have a value. */
    private int[] marks = new int[0];

    void reset() { pos = 0; }

    void ensure(int n) {
        if (pos + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
    }

    void bytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    /** A zig-zag varint; the caller has made room for 10 bytes. */
    void longUnchecked(long v) {
        long n = (v << 1) ^ (v >> 63);
        byte[] b = buf;
        int p = pos;
        while ((n & ~0x7FL) != 0) {
            b[p++] = (byte) ((n & 0x7F) | 0x80);
            n >>>= 7;
        }
        b[p++] = (byte) n;
        pos = p;
    }

    void writeLong(long v) {
        ensure(10);
        longUnchecked(v);
    }

    void string(String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        writeLong(u.length);
        bytes(u);
    }

    /** An array's single block: its count, or nothing for an empty array, whose end marker follows at once. */
    void arrayStart(int n) {
        if (n > 0) writeLong(n);
    }

    void arrayEnd() { writeLong(0); }

    void ints(int[] v, int n) {
        arrayStart(n);
        ensure(5 * n);
        for (int i = 0; i < n; i++) longUnchecked(v[i]);
        arrayEnd();
    }

    void longs(long[] v, int n) {
        arrayStart(n);
        ensure(10 * n);
        for (int i = 0; i < n; i++) longUnchecked(v[i]);
        arrayEnd();
    }

    /** Row 0 as it is, row i as its difference from row i-1. */
    void deltas(long[] v, int n) {
        arrayStart(n);
        ensure(10 * n);
        long prev = 0;
        for (int i = 0; i < n; i++) {
            longUnchecked(v[i] - prev);
            prev = v[i];
        }
        arrayEnd();
    }

    /**
     * A presence bitmap as Avro bytes (bit i%8 of byte i/8 set when row i has a value; no byte
     * when no row has one), or nothing when {@code present} is 0.
     */
    void sparseBitmap(int[] v, int n, int none, int present) {
        if (present == 0) {
            writeLong(0);
            return;
        }
        int bytes = (n + 7) >>> 3;
        writeLong(bytes);
        ensure(bytes);
        byte[] b = buf;
        int p = pos;
        for (int k = 0; k < bytes; k++) {
            int bits = 0;
            for (int i = k << 3, to = Math.min(n, i + 8), bit = 1; i < to; i++, bit <<= 1) if (v[i] != none) bits |= bit;
            b[p++] = (byte) bits;
        }
        pos = p;
    }

    /** A column with nulls as a record of a presence bitmap and the present values. */
    void sparseInts(int[] v, int n, int none) {
        int present = 0;
        for (int i = 0; i < n; i++) if (v[i] != none) present++;
        sparseBitmap(v, n, none, present);
        arrayStart(present);
        ensure(5 * present);
        for (int i = 0; i < n; i++) if (v[i] != none) longUnchecked(v[i]);
        arrayEnd();
    }

    void sparseLongs(long[] v, int n, long none) {
        // the bitmap from a row's mark, so that one loop writes bitmaps for every kind of column
        if (marks.length < n) marks = new int[Math.max(n, marks.length * 2)];
        int present = 0;
        for (int i = 0; i < n; i++) {
            boolean has = v[i] != none;
            marks[i] = has ? 1 : 0;
            if (has) present++;
        }
        sparseBitmap(marks, n, 0, present);
        arrayStart(present);
        ensure(10 * present);
        for (int i = 0; i < n; i++) if (v[i] != none) longUnchecked(v[i]);
        arrayEnd();
    }

    /**
     * {@link #sparseInts} of enum symbol indexes: a value outside the table is the last symbol
     * where that is Unknown, else null. {@code mapped} is scratch of n cells.
     */
    void sparseEnums(int[] v, int n, int none, int symbols, boolean lastIsUnknown, int[] mapped) {
        int known = lastIsUnknown ? symbols - 1 : symbols;
        for (int i = 0; i < n; i++) {
            int x = v[i];
            mapped[i] = x == none || (x >= 0 && x < known) ? x : lastIsUnknown ? symbols - 1 : none;
        }
        sparseInts(mapped, n, none);
    }

    byte[] toByteArray() { return Arrays.copyOf(buf, pos); }
}
