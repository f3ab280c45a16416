package io.swapstream.etw;

import java.nio.ByteBuffer;

/**
 * One event inside a buffer, as a reusable view: the walker refills the same instance for every
 * event so the hot loop allocates nothing. Copy what you keep.
 */
public final class TraceEvent {
    /** Extended-item marker bits, docs/etw-formats.md §2. */
    public static final int PMC_COUNTERS_MASK = 0x0700;
    public static final int PEBS_INDEX_FLAG = 0x8000;

    ByteBuffer data;
    BufferHeader buffer;
    int offset;
    int size;
    TraceHeaderType headerType;
    int marker;
    int hookId;
    long timestamp;
    int threadId;
    int processId;
    int pmcCount;
    int pmcOffset;
    int pebsOffset;
    int payloadOffset;

    /** The (decompressed) buffer: header at 0, events up to the fill mark; little-endian. */
    public ByteBuffer data() { return data; }
    public BufferHeader buffer() { return buffer; }
    public int processor() { return buffer.processor(); }
    /** Offset of the event in {@link #data()}. */
    public int offset() { return offset; }
    /** Header, extended items and payload. */
    public int size() { return size; }
    public TraceHeaderType headerType() { return headerType; }
    public int marker() { return marker; }
    /** Event version: the marker's low byte (kernel header types). */
    public int version() { return marker & 0xFF; }
    /** HookId (low byte Type, high byte Group) for SYSTEM, COMPACT and PERFINFO headers, else -1. */
    public int hookId() { return hookId; }
    /** Raw session clock; {@link Long#MIN_VALUE} for header types that carry none. */
    public long timestamp() { return timestamp; }
    /** -1 where the header type has none (PERFINFO). */
    public int threadId() { return threadId; }
    public int processId() { return processId; }
    public int pointerSize() { return headerType.pointerSize; }
    public int pmcCount() { return pmcCount; }
    public long pmcCounter(int i) { return data.getLong(pmcOffset + 8 * i); }
    public boolean hasPebsIndex() { return pebsOffset >= 0; }
    public long pebsIndex() { return data.getLong(pebsOffset); }
    public int payloadOffset() { return payloadOffset; }
    public int payloadLength() { return offset + size - payloadOffset; }
}
