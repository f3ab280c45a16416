package io.swapstream.decode;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/** Nullable values for decoder checkpoints, on top of DataOutput's primitives. */
final class StateCodec {
    private StateCodec() {}

    static void string(DataOutput o, String s) throws IOException {
        o.writeBoolean(s != null);
        if (s != null) o.writeUTF(s);
    }

    static String string(DataInput in) throws IOException {
        return in.readBoolean() ? in.readUTF() : null;
    }

    static void integer(DataOutput o, Integer v) throws IOException {
        o.writeBoolean(v != null);
        if (v != null) o.writeInt(v);
    }

    static Integer integer(DataInput in) throws IOException {
        return in.readBoolean() ? in.readInt() : null;
    }

    static void longValue(DataOutput o, Long v) throws IOException {
        o.writeBoolean(v != null);
        if (v != null) o.writeLong(v);
    }

    static Long longValue(DataInput in) throws IOException {
        return in.readBoolean() ? in.readLong() : null;
    }

    /** A zig-zag variable-length long: small magnitudes take one or two bytes. */
    static void varLong(DataOutput o, long v) throws IOException {
        long z = (v << 1) ^ (v >> 63);
        while ((z & ~0x7FL) != 0) {
            o.writeByte((int) ((z & 0x7F) | 0x80));
            z >>>= 7;
        }
        o.writeByte((int) z);
    }

    static long varLong(DataInput in) throws IOException {
        long z = 0;
        int shift = 0;
        int b;
        do {
            b = in.readUnsignedByte();
            z |= (long) (b & 0x7F) << shift;
            shift += 7;
        } while ((b & 0x80) != 0 && shift < 70);
        return (z >>> 1) ^ -(z & 1);
    }
}
