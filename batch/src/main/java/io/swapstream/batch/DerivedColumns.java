package io.swapstream.batch;

import io.swapstream.etw.SessionClock;
import java.util.Arrays;
import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;

/**
 * The rules by which {@code ContextSwitchBatch} derives a column from others within the batch
 * (docs/reading-the-topics.md). The writer computes a rule and sends only the rows where the real
 * column differs; the reader computes the same rule and puts those rows back. Both use these
 * methods, so a rule's corner cases (a batch's first row on a processor, a thread whose earlier
 * switch-out is in another batch) cost an exception row, never a wrong value.
 */
final class DerivedColumns {
    /** Processors up to this index keep their last time in an array; any other in a map. */
    private static final int LANES = 4096;

    private long[] lanes = new long[64];
    private final Int2LongOpenHashMap otherLanes = new Int2LongOpenHashMap();
    private long[] lastOut = new long[256];

    DerivedColumns() {
        otherLanes.defaultReturnValue(SwitchBatch.NO_TIME);
    }

    /** timeNanos from timestamp by the batch's session clock. */
    static void timeNanos(SwitchBatch b, int n, long[] out) {
        long baseTs = b.clockBaseTimestamp();
        long baseNanos = b.clockBaseNanos();
        long f = b.clockTicksPerSecond();
        long[] ts = b.timestamp;
        if (1_000_000_000L % f == 0) {
            // a whole number of nanoseconds a tick (10 MHz QPC, FILETIME): a multiplication, no division
            long perTick = 1_000_000_000L / f;
            long limit = Long.MAX_VALUE / perTick;
            for (int i = 0; i < n; i++) {
                long d = ts[i] - baseTs;
                out[i] = d > -limit && d < limit ? baseNanos + d * perTick : SessionClock.toUnixNanos(ts[i], baseTs, baseNanos, f);
            }
            return;
        }
        for (int i = 0; i < n; i++) out[i] = SessionClock.toUnixNanos(ts[i], baseTs, baseNanos, f);
    }

    /**
     * newThreadTimeSinceLastNanos: the row's time minus that of the latest earlier row whose old
     * thread is this row's new thread; none when there is none, or the new thread is unknown or
     * idle. {@code oldIndex} and {@code newIndex} index {@code threadIds} (of {@code threads} ids).
     */
    void timeSinceLast(SwitchBatch b, int n, int[] threadIds, int threads, int[] oldIndex, int[] newIndex, long[] out) {
        if (lastOut.length < threads) lastOut = new long[Math.max(threads, lastOut.length * 2)];
        long[] last = lastOut;
        Arrays.fill(last, 0, threads, SwitchBatch.NO_TIME);
        long[] t = b.timeNanos;
        for (int i = 0; i < n; i++) {
            int k = newIndex[i];
            out[i] = k == SwitchBatch.NONE || threadIds[k] == 0 || last[k] == SwitchBatch.NO_TIME ? SwitchBatch.NO_TIME : t[i] - last[k];
            last[oldIndex[i]] = t[i];
        }
    }

    /**
     * oldThreadRunNanos: the row's time minus that of the latest earlier row on the same
     * processor; none when there is none or the old thread is idle.
     */
    void runNanos(SwitchBatch b, int n, long[] out) {
        int[] cpu = b.cpu;
        int[] old = b.oldThreadId;
        long[] t = b.timeNanos;
        int lanesUsed = 0;
        for (int i = 0; i < n; i++) {
            int c = cpu[i];
            if (c >= 0 && c < LANES && c >= lanesUsed) {
                if (c >= lanes.length) lanes = Arrays.copyOf(lanes, Math.max(c + 1, lanes.length * 2));
                Arrays.fill(lanes, lanesUsed, c + 1, SwitchBatch.NO_TIME);
                lanesUsed = c + 1;
            }
        }
        otherLanes.clear();
        for (int i = 0; i < n; i++) {
            int c = cpu[i];
            long prev;
            if (c >= 0 && c < LANES) {
                prev = lanes[c];
                lanes[c] = t[i];
            } else {
                prev = otherLanes.put(c, t[i]);
            }
            out[i] = old[i] == 0 || prev == SwitchBatch.NO_TIME ? SwitchBatch.NO_TIME : t[i] - prev;
        }
    }

    /** newThreadWaitsNanos: time since last minus ready time where the row has both; none otherwise. */
    static void waitsNanos(SwitchBatch b, int n, long[] out) {
        long[] since = b.newThreadTimeSinceLastNanos;
        long[] ready = b.newThreadReadyNanos;
        for (int i = 0; i < n; i++) {
            out[i] = since[i] == SwitchBatch.NO_TIME || ready[i] == SwitchBatch.NO_TIME ? SwitchBatch.NO_TIME : since[i] - ready[i];
        }
    }
}
