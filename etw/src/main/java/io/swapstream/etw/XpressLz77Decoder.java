package io.swapstream.etw;

/**
 * MS-XCA "plain LZ77" (XPRESS, COMPRESSION_FORMAT_XPRESS) decompression, MS-XCA §2.4.
 * Written by hand: Maven Central has no maintained Java implementation of this format.
 */
public final class XpressLz77Decoder {
    private XpressLz77Decoder() {}

    /** Thrown for input that cannot be decoded; {@link #inputOffset} is where decoding stopped. */
    public static final class CorruptInputException extends Exception {
        public final int inputOffset;

        CorruptInputException(int inputOffset, String reason) {
            super(reason, null, false, false);
            this.inputOffset = inputOffset;
        }
    }

    /**
     * Decodes {@code in[inStart, inEnd)} into {@code out[outStart, outStart + expected)} and fails
     * unless exactly {@code expected} bytes come out.
     */
    public static void decode(byte[] in, int inStart, int inEnd, byte[] out, int outStart, int expected)
            throws CorruptInputException {
        int ip = inStart;
        int op = outStart;
        final int outEnd = outStart + expected;
        int flags = 0;
        int flagCount = 0;
        int lastLengthHalfByte = -1;
        while (op < outEnd) {
            if (flagCount == 0) {
                if (ip + 4 > inEnd) throw new CorruptInputException(ip, "compressed data ends inside a flag word");
                flags = u32(in, ip);
                ip += 4;
                flagCount = 32;
            }
            flagCount--;
            if ((flags & (1 << flagCount)) == 0) {
                if (ip >= inEnd) throw new CorruptInputException(ip, "compressed data ends before a literal");
                out[op++] = in[ip++];
                continue;
            }
            if (ip + 2 > inEnd) throw new CorruptInputException(ip, "compressed data ends inside a match");
            int matchBytes = (in[ip] & 0xFF) | (in[ip + 1] & 0xFF) << 8;
            ip += 2;
            int distance = (matchBytes >>> 3) + 1;
            int length = matchBytes & 7;
            if (length == 7) {
                if (lastLengthHalfByte < 0) {
                    if (ip >= inEnd) throw new CorruptInputException(ip, "compressed data ends inside a match length");
                    length = in[ip] & 0x0F;
                    lastLengthHalfByte = ip;
                    ip++;
                } else {
                    length = (in[lastLengthHalfByte] & 0xFF) >>> 4;
                    lastLengthHalfByte = -1;
                }
                if (length == 15) {
                    if (ip >= inEnd) throw new CorruptInputException(ip, "compressed data ends inside a match length");
                    length = in[ip++] & 0xFF;
                    if (length == 255) {
                        if (ip + 2 > inEnd) throw new CorruptInputException(ip, "compressed data ends inside a match length");
                        length = (in[ip] & 0xFF) | (in[ip + 1] & 0xFF) << 8;
                        ip += 2;
                        if (length == 0) {
                            if (ip + 4 > inEnd) throw new CorruptInputException(ip, "compressed data ends inside a match length");
                            // unsigned, and checked against the room left before the biases are added: an int
                            // from 0x7FFFFFFD up once wrapped past the checks below
                            long wide = Integer.toUnsignedLong(u32(in, ip));
                            ip += 4;
                            if (wide >= 15 + 7 && wide + 3 > outEnd - op) {
                                throw new CorruptInputException(ip - 4, "match of " + (wide + 3) + " bytes runs past the expected size "
                                        + expected);
                            }
                            length = (int) wide;
                        }
                        if (length < 15 + 7) throw new CorruptInputException(ip - 2, "invalid match length " + length);
                        length -= 15 + 7;
                    }
                    length += 15;
                }
                length += 7;
            }
            length += 3;
            if (distance > op - outStart) {
                throw new CorruptInputException(ip - 2, "match distance " + distance + " reaches before the output start");
            }
            if (length > outEnd - op) {
                throw new CorruptInputException(ip - 2, "match of " + length + " bytes runs past the expected size " + expected);
            }
            int n = length;
            int from = op - distance;
            if (distance >= n) {
                System.arraycopy(out, from, out, op, n);
                op += n;
            } else {
                for (int i = 0; i < n; i++) out[op++] = out[from++];
            }
        }
    }

    private static int u32(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16 | (b[i + 3] & 0xFF) << 24;
    }
}
