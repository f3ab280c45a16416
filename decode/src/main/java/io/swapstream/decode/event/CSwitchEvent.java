package io.swapstream.decode.event;

import java.nio.ByteBuffer;

/**
 * WMI_CONTEXTSWAP, the payload of a 0x0524 CSwitch event (docs/etw-formats.md §4). Every
 * version is 0x18 bytes; extra payload bytes of later versions are ignored.
 */
public record CSwitchEvent(
        int newThreadId,
        int oldThreadId,
        int newThreadPriority,
        int oldThreadPriority,
        int previousCState,
        int newThreadPriorityDecrement,
        int oldThreadWaitReason,
        int oldThreadWaitMode,
        int oldThreadState,
        int oldThreadIdealProcessor,
        long newThreadWaitTime,
        int oldThreadRemainingQuantum) {

    public static final int HOOK_ID = 0x0524;
    public static final int SIZE = 0x18;

    /** Decodes the payload at {@code p}; {@code len} is the payload length. */
    public static CSwitchEvent decode(ByteBuffer d, int p, int len) {
        check(len);
        return new CSwitchEvent(
                d.getInt(p),
                d.getInt(p + 4),
                d.get(p + 8),
                d.get(p + 9),
                d.get(p + 10) & 0xFF,
                d.get(p + 11),
                d.get(p + 12) & 0xFF,
                waitMode(d, p),
                d.get(p + 14) & 0xFF,
                d.get(p + 15) & 0xFF,
                Integer.toUnsignedLong(d.getInt(p + 16)),
                d.getInt(p + 20));
    }

    public static void check(int len) {
        if (len < SIZE) throw new MalformedEventException("CSwitch payload of " + len + " bytes is shorter than 24");
    }

    // Field readers for the expansion's hot loop: no record allocated per event.
    public static int newThreadId(ByteBuffer d, int p) { return d.getInt(p); }
    public static int oldThreadId(ByteBuffer d, int p) { return d.getInt(p + 4); }
    public static int newThreadPriority(ByteBuffer d, int p) { return d.get(p + 8); }
    public static int oldThreadPriority(ByteBuffer d, int p) { return d.get(p + 9); }
    public static int oldThreadWaitReason(ByteBuffer d, int p) { return d.get(p + 12) & 0xFF; }
    /** From build 1703 the byte is a flags byte whose bit 0 is the wait mode; before, it is 0 or 1. */
    public static int waitMode(ByteBuffer d, int p) { return d.get(p + 13) & 1; }
    public static int oldThreadState(ByteBuffer d, int p) { return d.get(p + 14) & 0xFF; }
    public static long newThreadWaitTime(ByteBuffer d, int p) { return Integer.toUnsignedLong(d.getInt(p + 16)); }
    /** PreviousCState when the old thread is the idle thread, else OldThreadRank: one byte, two meanings. */
    public static int previousCStateOrRank(ByteBuffer d, int p) { return d.get(p + 10) & 0xFF; }
    public static int newThreadPriorityDecrement(ByteBuffer d, int p) { return d.get(p + 11); }
    public static int oldThreadIdealProcessor(ByteBuffer d, int p) { return d.get(p + 15) & 0xFF; }
    public static int oldThreadRemainingQuantum(ByteBuffer d, int p) { return d.getInt(p + 20); }
}
