package io.swapstream.aggregate;

import io.swapstream.schemas.avro.WakeEdge;
import java.util.List;

/**
 * What {@link SessionStatistics} gives out as windows close: rows and wake edges kept in lists offline, records
 * forwarded in the aggregate stage.
 */
public interface StatisticsOutput {
    /** The accumulator of {@code tid} for the closing window starting at {@code windowStart}, final: its row. */
    void windowRow(int tid, ThreadStatsAccumulator a, long windowStart);

    /** Every row of the window starting at {@code windowStart} has gone to {@link #windowRow}. */
    default void windowClosed(long windowStart) { }

    /** The wake edges of a window that just closed (without windows, the whole session's), named. */
    void edgesClosed(List<WakeEdge> edges);
}
