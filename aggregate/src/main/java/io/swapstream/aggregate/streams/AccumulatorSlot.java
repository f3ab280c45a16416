package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;

/** One accumulator as loaded, with its store key: a switch costs no key string and no store lookup. */
final class AccumulatorSlot {
    final String key;
    final int tid;
    /** The window's start, or {@link SessionStatistics#WHOLE}. */
    final long start;
    final ThreadStatsAccumulator accumulator;
    /** Changed since the accumulators were last written. */
    boolean dirty;
    /** In the store (written at a flush, or loaded from it): only then does the end delete its key. */
    boolean stored;
    boolean changedSinceEmit;
    boolean dropped;

    AccumulatorSlot(String key, int tid, long start, ThreadStatsAccumulator accumulator) {
        this.key = key;
        this.tid = tid;
        this.start = start;
        this.accumulator = accumulator;
    }

    byte[] encode() {
        return start == SessionStatistics.WHOLE ? AccumulatorCodec.encode(accumulator) : AccumulatorCodec.encodeWindow(accumulator, start);
    }
}
