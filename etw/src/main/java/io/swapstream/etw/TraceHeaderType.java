package io.swapstream.etw;

/**
 * The trace header types of docs/etw-formats.md §2: byte 2 of an event's marker. "32/64" names the
 * payload's pointer size.
 */
public enum TraceHeaderType {
    SYSTEM32(0x01, 0x20, true, 4),
    SYSTEM64(0x02, 0x20, true, 8),
    COMPACT32(0x03, 0x18, true, 4),
    COMPACT64(0x04, 0x18, true, 8),
    FULL_HEADER32(0x0A, 0x30, false, 4),
    INSTANCE32(0x0B, 0, false, 4),
    ERROR(0x0D, 0, false, 0),
    MESSAGE(0x0F, 0, false, 0),
    PERFINFO32(0x10, 0x10, true, 4),
    PERFINFO64(0x11, 0x10, true, 8),
    EVENT_HEADER32(0x12, 0x50, false, 4),
    EVENT_HEADER64(0x13, 0x50, false, 8),
    FULL_HEADER64(0x14, 0x30, false, 8),
    INSTANCE64(0x15, 0, false, 8);

    private static final TraceHeaderType[] BY_CODE = new TraceHeaderType[256];

    static {
        for (TraceHeaderType t : values()) BY_CODE[t.code] = t;
    }

    /** Byte 2 of the marker. */
    public final int code;
    /** The header's fixed part; 0 where the event is only skipped by its size. */
    public final int fixedSize;
    /** SYSTEM, COMPACT and PERFINFO: Version in bytes 0-1, Size at +4, HookId at +6. */
    public final boolean kernel;
    /** Pointer size of the payload, 0 when not defined. */
    public final int pointerSize;

    TraceHeaderType(int code, int fixedSize, boolean kernel, int pointerSize) {
        this.code = code;
        this.fixedSize = fixedSize;
        this.kernel = kernel;
        this.pointerSize = pointerSize;
    }

    /** The type for a marker's byte 2, or null when it is not one this reader knows. */
    public static TraceHeaderType of(int code) {
        return code >= 0 && code < 256 ? BY_CODE[code] : null;
    }

    public boolean isSystem() { return this == SYSTEM32 || this == SYSTEM64 || this == COMPACT32 || this == COMPACT64; }
}
