package io.swapstream.decode.event;

import java.nio.ByteBuffer;

/**
 * ReadyThread, HookId 0x0532 (docs/etw-formats.md §7): a thread became Ready, logged on the processor
 * of the code that readied it. Payload: {@code u32 AwakenedThreadId @0, u8 AdjustReason @4,
 * s8 AdjustIncrement @5, u8 Flags @6}; the header names no thread, so the readying thread is
 * whichever runs on that processor then. Static reads, no object per event.
 */
public final class ReadyThread {
    public static final int HOOK_ID = 0x0532;
    public static final int PAYLOAD_BYTES = 8;
    /** Flags bit 0: readied from a DPC, not by a thread. */
    public static final int FLAG_READIED_FROM_DPC = 1;

    private ReadyThread() {}

    public static void check(int payloadLength) {
        if (payloadLength < PAYLOAD_BYTES) {
            throw new MalformedEventException("ReadyThread payload of " + payloadLength + " bytes is shorter than " + PAYLOAD_BYTES);
        }
    }

    public static int awakenedThreadId(ByteBuffer d, int p) { return d.getInt(p); }
    public static int flags(ByteBuffer d, int p) { return d.get(p + 6) & 0xFF; }
}
