package io.swapstream.decode.event;

import io.swapstream.etw.KernelEnums;
import java.nio.ByteBuffer;

/**
 * PERFINFO_CCSWAP_BUFFER, the payload of a 0x0525 compact context-switch batch (docs/etw-formats.md
 * §5): a 0x58-byte header (FirstTimeStamp, TidTable[16], ThreadBasePriority[16]) then
 * packets of 2, 4 or 8 bytes whose kind is the low two bits of their first byte.
 */
public final class CompactBatchDecoder {
    private CompactBatchDecoder() {}

    public static final int HOOK_ID = 0x0525;
    public static final int HEADER_SIZE = 0x58;
    public static final int TID_TABLE = 0x08;
    public static final int BASE_PRIORITIES = 0x48;
    /** The kernel's limit for a whole batch (header and packets). */
    public static final int MAX_BATCH = 0x400;

    public static final int IDLE_SHORT = 0;
    public static final int IDLE = 1;
    public static final int LITE = 2;
    public static final int FULL = 3;

    public static final String[] KIND_NAMES = {"IdleShort", "Idle", "Lite", "Full"};

    /**
     * Time of a packet from the previous one. Whether the first delta counts from FirstTimeStamp is
     * open in docs/etw-formats.md §5; adopted: it does, so ts[k] = FirstTimeStamp + sum(TimeDelta[0..k]).
     */
    public static long advance(long previous, int delta) {
        return previous + delta;
    }

    public static long firstTimeStamp(ByteBuffer d, int p) { return d.getLong(p); }
    public static int tid(ByteBuffer d, int p, int index) { return d.getInt(p + TID_TABLE + 4 * index); }
    public static int basePriority(ByteBuffer d, int p, int index) { return d.get(p + BASE_PRIORITIES + index); }

    /**
     * Decodes every packet of the batch at {@code p} ({@code len} bytes of payload).
     *
     * @param maximumWaitReason the session's MaximumWaitReason: OldThreadStateWr values below it
     *                          are wait reasons, values at or above are KTHREAD_STATE + it
     * @return the number of packets
     */
    public static int decode(ByteBuffer d, int p, int len, int maximumWaitReason, CompactSwitchSink sink) {
        if (len < HEADER_SIZE) {
            throw new MalformedEventException("compact batch payload of " + len + " bytes is shorter than its 88-byte header");
        }
        long ts = d.getLong(p);
        int q = p + HEADER_SIZE;
        final int end = p + len;
        int packets = 0;
        while (q < end) {
            int first = d.get(q) & 3;
            switch (first) {
                case IDLE_SHORT -> {
                    need(q, 2, end, p);
                    int v = Short.toUnsignedInt(d.getShort(q));
                    ts = advance(ts, v >>> 2);
                    sink.onSwitch(IDLE_SHORT, ts, 0, -1, -1, -1, -1, -1);
                    q += 2;
                }
                case IDLE -> {
                    need(q, 4, end, p);
                    ts = advance(ts, d.getInt(q) >>> 2);
                    sink.onSwitch(IDLE, ts, 0, -1, -1, -1, -1, -1);
                    q += 4;
                }
                case LITE -> {
                    need(q, 4, end, p);
                    int v = d.getInt(q);
                    int index = (v >>> 2) & 0xF;
                    int inc = (v >>> 6) & 0x7;
                    int stateWr = (v >>> 9) & 0x3F;
                    ts = advance(ts, v >>> 15);
                    emit(sink, LITE, ts, d, p, index, basePriority(d, p, index) + inc, stateWr, maximumWaitReason, 1);
                    q += 4;
                }
                default -> {
                    need(q, 8, end, p);
                    int v1 = d.getInt(q);
                    int v2 = d.getInt(q + 4);
                    ts = advance(ts, v1 >>> 2);
                    int index = v2 & 0xF;
                    int stateWr = (v2 >>> 4) & 0x3F;
                    int priority = (v2 >>> 10) & 0x1F;
                    int waitTime = v2 >>> 15;
                    emit(sink, FULL, ts, d, p, index, priority, stateWr, maximumWaitReason, waitTime);
                    q += 8;
                }
            }
            packets++;
        }
        return packets;
    }

    private static void emit(CompactSwitchSink sink, int kind, long ts, ByteBuffer d, int p, int index, int priority,
                             int stateWr, int maximumWaitReason, int waitTime) {
        int state;
        int reason;
        if (stateWr < maximumWaitReason) {
            state = KernelEnums.STATE_WAITING;
            reason = stateWr;
        } else {
            state = stateWr - maximumWaitReason;
            reason = -1;
        }
        sink.onSwitch(kind, ts, tid(d, p, index), priority, state, reason, waitTime, index);
    }

    private static void need(int q, int n, int end, int p) {
        if (q + n > end) {
            throw new MalformedEventException("compact packet at batch byte " + (q - p) + " needs " + n
                    + " bytes but the batch ends after " + (end - q));
        }
    }
}
