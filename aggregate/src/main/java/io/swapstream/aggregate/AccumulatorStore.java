package io.swapstream.aggregate;

/**
 * Where a session's accumulators live: in maps offline, paged between memory and a state store in the
 * aggregate stage. One of the three things {@link SessionStatistics} asks of its host, with
 * {@link LabelStore} and {@link StatisticsOutput}.
 */
public interface AccumulatorStore {
    /** Takes a thread's accumulator. */
    @FunctionalInterface
    interface Each {
        void accept(int tid, ThreadStatsAccumulator a);
    }

    /**
     * The accumulator of {@code tid} for the window starting at {@code windowStart}, or the whole session when it
     * is {@link SessionStatistics#WHOLE}, about to change.
     */
    ThreadStatsAccumulator of(int tid, long windowStart);

    /**
     * The switches have passed the end of the window starting at {@code windowStart}: gives {@code each} every
     * accumulator of it, final, then merges each into its thread's whole-session accumulator.
     */
    void closeWindow(long windowStart, Each each);
}
