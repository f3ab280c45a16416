package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;

/** One accumulator in memory, with its store key and where it stands against the store: a switch costs no key string and no lookup. */
final class AccumulatorSlot {
    /** Where an accumulator in memory stands against the accumulators store. */
    enum State {
        /** Changed, and never written: the store has no key for it. */
        UNWRITTEN,
        /** Changed since the store's copy (written at a flush, or the one it was loaded from). */
        CHANGED,
        /** As the store holds it. */
        WRITTEN,
        /** A window's, closed: its row went out and it was merged into its thread's whole-session accumulator. */
        CLOSED
    }

    final String key;
    final int tid;
    /** The window's start, or {@link SessionStatistics#WHOLE}. */
    final long start;
    final ThreadStatsAccumulator accumulator;
    State state;
    /** A whole-session accumulator changed since its thread's row last went out. */
    boolean rowDue;

    AccumulatorSlot(String key, int tid, long start, ThreadStatsAccumulator accumulator, State state) {
        this.key = key;
        this.tid = tid;
        this.start = start;
        this.accumulator = accumulator;
        this.state = state;
    }

    /** Changed since the store's copy, or never written. */
    boolean unwritten() {
        return state == State.UNWRITTEN || state == State.CHANGED;
    }

    /** The store holds a key for it. */
    boolean inStore() {
        return state == State.CHANGED || state == State.WRITTEN;
    }

    byte[] encode() {
        return start == SessionStatistics.WHOLE ? AccumulatorCodec.encode(accumulator) : AccumulatorCodec.encodeWindow(accumulator, start);
    }
}
