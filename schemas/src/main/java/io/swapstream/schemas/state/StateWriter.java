package io.swapstream.schemas.state;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes a state value into a growable array: fixed-width numbers big-endian, small ones as zig-zag
 * varints, strings as a length and UTF-8. No stream, no lock, no checked exception: a checkpoint writes
 * the merge's queue a field at a time.
 */
public final class StateWriter {
    private byte[] buf;
    private int size;

    public StateWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    private void room(int n) {
        if (size + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
    }

    public StateWriter writeByte(int v) {
        room(1);
        buf[size++] = (byte) v;
        return this;
    }

    public StateWriter writeBoolean(boolean v) {
        return writeByte(v ? 1 : 0);
    }

    public StateWriter writeInt(int v) {
        room(4);
        buf[size++] = (byte) (v >>> 24);
        buf[size++] = (byte) (v >>> 16);
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
        return this;
    }

    public StateWriter writeLong(long v) {
        writeInt((int) (v >>> 32));
        return writeInt((int) v);
    }

    /** A zig-zag variable-length long: small magnitudes take one or two bytes. */
    public StateWriter varLong(long v) {
        long z = (v << 1) ^ (v >> 63);
        room(10);
        while ((z & ~0x7FL) != 0) {
            buf[size++] = (byte) ((z & 0x7F) | 0x80);
            z >>>= 7;
        }
        buf[size++] = (byte) z;
        return this;
    }

    /** A string, not null. */
    public StateWriter string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        varLong(b.length);
        return raw(b, 0, b.length);
    }

    public StateWriter nullableString(String s) {
        writeBoolean(s != null);
        return s == null ? this : string(s);
    }

    public StateWriter nullableInt(Integer v) {
        writeBoolean(v != null);
        return v == null ? this : writeInt(v);
    }

    public StateWriter nullableLong(Long v) {
        writeBoolean(v != null);
        return v == null ? this : writeLong(v);
    }

    /** A byte array with its length. */
    public StateWriter bytes(byte[] b) {
        varLong(b.length);
        return raw(b, 0, b.length);
    }

    /** Bytes as they are, without a length. */
    public StateWriter raw(byte[] b, int offset, int length) {
        room(length);
        System.arraycopy(b, offset, buf, size, length);
        size += length;
        return this;
    }

    public int size() {
        return size;
    }

    public void clear() {
        size = 0;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }
}
