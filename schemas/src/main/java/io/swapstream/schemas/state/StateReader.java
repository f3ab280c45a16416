package io.swapstream.schemas.state;

import java.nio.charset.StandardCharsets;

/** Reads what a {@link StateWriter} wrote. A value cut short is an {@link IllegalStateException} naming where. */
public final class StateReader {
    private final byte[] buf;
    private final int end;
    private int pos;

    public StateReader(byte[] buf, int offset, int length) {
        this.buf = buf;
        this.pos = offset;
        this.end = offset + length;
    }

    private void need(int n) {
        if (end - pos < n) throw new IllegalStateException("a state value ends at byte " + pos + " where " + n + " more were due");
    }

    public int readUnsignedByte() {
        need(1);
        return buf[pos++] & 0xFF;
    }

    public boolean readBoolean() {
        return readUnsignedByte() != 0;
    }

    public int readInt() {
        need(4);
        int v = (buf[pos] & 0xFF) << 24 | (buf[pos + 1] & 0xFF) << 16 | (buf[pos + 2] & 0xFF) << 8 | (buf[pos + 3] & 0xFF);
        pos += 4;
        return v;
    }

    public long readLong() {
        return (long) readInt() << 32 | (readInt() & 0xFFFFFFFFL);
    }

    public long varLong() {
        long z = 0;
        int shift = 0;
        int b;
        do {
            b = readUnsignedByte();
            z |= (long) (b & 0x7F) << shift;
            shift += 7;
        } while ((b & 0x80) != 0 && shift < 70);
        return (z >>> 1) ^ -(z & 1);
    }

    public String string() {
        int n = length();
        String s = new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    public String nullableString() {
        return readBoolean() ? string() : null;
    }

    public Integer nullableInt() {
        return readBoolean() ? readInt() : null;
    }

    public Long nullableLong() {
        return readBoolean() ? readLong() : null;
    }

    public byte[] bytes() {
        return raw(length());
    }

    /** {@code n} bytes as they are. */
    public byte[] raw(int n) {
        need(n);
        byte[] b = java.util.Arrays.copyOfRange(buf, pos, pos + n);
        pos += n;
        return b;
    }

    public int remaining() {
        return end - pos;
    }

    private int length() {
        long n = varLong();
        if (n < 0 || n > end - pos) throw new IllegalStateException("a state value's length " + n + " at byte " + pos + " runs past its end");
        return (int) n;
    }
}
