package io.swapstream.etw;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** WMI_BUFFER_HEADER (0x48 bytes), docs/etw-formats.md §1. */
public record BufferHeader(
        long fileOffset,
        int bufferSize,
        long timeStamp,
        long sequenceNumber,
        int processor,
        int loggerId,
        int fillMark,
        int flags,
        int type) {

    public static final int SIZE = 0x48;

    public static final int FLAG_FLUSH_MARKER = 0x1;
    public static final int FLAG_EVENTS_LOST = 0x2;
    public static final int FLAG_BUFFER_LOST = 0x4;
    public static final int FLAG_RTBACKUP_CORRUPT = 0x8;
    public static final int FLAG_RTBACKUP = 0x10;
    public static final int FLAG_PROC_INDEX = 0x20;
    public static final int FLAG_COMPRESSED = 0x40;

    public static final int TYPE_GENERIC = 0;
    public static final int TYPE_RUNDOWN = 1;
    public static final int TYPE_CTX_SWAP = 2;
    public static final int TYPE_REFTIME = 3;
    public static final int TYPE_HEADER = 4;
    public static final int TYPE_BATCHED = 5;
    public static final int TYPE_EMPTY_MARKER = 6;
    public static final int TYPE_DBG_INFO = 7;

    private static final String[] TYPE_NAMES = {
        "GENERIC", "RUNDOWN", "CTX_SWAP", "REFTIME", "HEADER", "BATCHED", "EMPTY_MARKER", "DBG_INFO"
    };
    private static final String[] FLAG_NAMES = {
        "FLUSH_MARKER", "EVENTS_LOST", "BUFFER_LOST", "RTBACKUP_CORRUPT", "RTBACKUP", "PROC_INDEX", "COMPRESSED"
    };

    /** Reads the header at {@code at}; {@code b} must be little-endian and hold 0x48 bytes there. */
    public static BufferHeader read(ByteBuffer b, int at, long fileOffset) {
        int flags = Short.toUnsignedInt(b.getShort(at + 0x34));
        int rawProcessor = Short.toUnsignedInt(b.getShort(at + 0x28));
        // Win8+ sets PROC_INDEX and keeps an 11-bit index; Win7 stores 0x0800 | cpu in the same word.
        int processor = (flags & FLAG_PROC_INDEX) != 0 ? rawProcessor & 0x7FF : rawProcessor & 0xFF;
        return new BufferHeader(
                fileOffset,
                b.getInt(at),
                b.getLong(at + 0x10),
                b.getLong(at + 0x18),
                processor,
                Short.toUnsignedInt(b.getShort(at + 0x2A)),
                b.getInt(at + 0x30),
                flags,
                Short.toUnsignedInt(b.getShort(at + 0x36)));
    }

    /** Convenience for tests and tools: the header at the start of {@code bytes}. */
    public static BufferHeader read(byte[] bytes, long fileOffset) {
        return read(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN), 0, fileOffset);
    }

    public boolean compressed() { return (flags & FLAG_COMPRESSED) != 0; }
    public boolean eventsLost() { return (flags & FLAG_EVENTS_LOST) != 0; }
    public boolean bufferLost() { return (flags & FLAG_BUFFER_LOST) != 0; }

    public static String typeName(int type) {
        return type >= 0 && type < TYPE_NAMES.length ? TYPE_NAMES[type] : "TYPE_" + type;
    }

    public static String flagNames(int flags) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < FLAG_NAMES.length; i++) {
            if ((flags & (1 << i)) != 0) sb.append(sb.length() == 0 ? "" : "|").append(FLAG_NAMES[i]);
        }
        return sb.toString();
    }
}
