package io.swapstream.generate;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Builds one processor's PERFINFO_CCSWAP_BUFFER batches by the kernel's rules (docs/etw-formats.md §5,
 * docs/etw-formats.md §5): a batch is logged when its TID table is full and a new old thread comes, when
 * fewer than 8 bytes remain of its 0x400, when a time delta does not fit 30 bits, or when it is older
 * than the maximum batch age (checked at each switch and by {@link #flushIfOlder} at the flush
 * timer), and when the session stops. Each batch starts at its first switch (FirstTimeStamp = that
 * switch's time, first delta 0). A logged batch's event timestamp is the time it was flushed, so
 * in the trace it follows events that the processor logged while it was open.
 */
final class CompactBatchEncoder {
    static final int HEADER = 0x58;
    static final int MAX = 0x400;

    interface BatchSink {
        /** @param flushTs when the batch was logged: its event timestamp */
        void onBatch(int cpu, long flushTs, byte[] payload, int length);
    }

    private final int cpu;
    private final int maximumWaitReason;
    private final long maxAge;
    private final BatchSink sink;
    private final ByteBuffer b = ByteBuffer.allocate(MAX).order(ByteOrder.LITTLE_ENDIAN);
    private int tids;
    private int pos = -1;
    private long firstTs;
    private long lastTs;

    /** @param maxAge the maximum batch age in session clock ticks */
    CompactBatchEncoder(int cpu, int maximumWaitReason, long maxAge, BatchSink sink) {
        this.cpu = cpu;
        this.maximumWaitReason = maximumWaitReason;
        this.maxAge = maxAge;
        this.sink = sink;
    }

    void onSwitch(long ts, int oldTid, int oldPriority, int oldBase, int oldState, int oldReason, int newWaitTicks) {
        long delta = pos < 0 ? 0 : ts - lastTs;
        if (pos >= 0) {
            boolean tableFull = oldTid != 0 && index(oldTid) < 0 && tids == 16;
            if (tableFull || MAX - pos < 8 || delta >= 1L << 30 || ts - firstTs > maxAge) {
                flush(ts);
                delta = 0;
            }
        }
        if (pos < 0) open(ts);
        lastTs = ts;
        int d = (int) delta;
        if (oldTid == 0) {
            if (delta < 1 << 14) {
                b.putShort(pos, (short) (d << 2));
                pos += 2;
            } else {
                b.putInt(pos, 1 | d << 2);
                pos += 4;
            }
            return;
        }
        int index = index(oldTid);
        if (index < 0) {
            index = tids++;
            b.putInt(8 + 4 * index, oldTid);
            b.put(0x48 + index, (byte) oldBase);
        }
        int base = b.get(0x48 + index);
        int inc = oldPriority - base;
        int stateWr = oldState == 5 ? oldReason : oldState + maximumWaitReason;
        if (newWaitTicks <= 1 && delta < 1 << 17 && inc >= 0 && inc <= 7) {
            b.putInt(pos, 2 | index << 2 | inc << 6 | stateWr << 9 | d << 15);
            pos += 4;
        } else {
            int wait = Math.min(newWaitTicks, (1 << 17) - 1);
            b.putInt(pos, 3 | d << 2);
            b.putInt(pos + 4, index | stateWr << 4 | (oldPriority & 0x1F) << 10 | wait << 15);
            pos += 8;
        }
    }

    private int index(int tid) {
        for (int i = 0; i < tids; i++) if (b.getInt(8 + 4 * i) == tid) return i;
        return -1;
    }

    private void open(long ts) {
        java.util.Arrays.fill(b.array(), (byte) 0);
        b.putLong(0, ts);
        tids = 0;
        pos = HEADER;
        firstTs = ts;
    }

    /** The flush timer: logs the open batch at {@code now} if it is older than the maximum age. */
    void flushIfOlder(long now) {
        if (pos >= 0 && now - firstTs > maxAge) flush(now);
    }

    /** Logs the open batch, if any, at time {@code flushTs}. */
    void flush(long flushTs) {
        if (pos < 0 || pos == HEADER) {
            pos = -1;
            return;
        }
        sink.onBatch(cpu, flushTs, b.array(), pos);
        pos = -1;
    }
}
