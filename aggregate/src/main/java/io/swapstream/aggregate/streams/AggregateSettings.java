package io.swapstream.aggregate.streams;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.stage.RedoLog;
import java.util.Map;

/**
 * The aggregate stage's settings, read and checked once from the Streams configuration.
 *
 * @param windowNanos    tumbling window (0: whole-session statistics only)
 * @param emitIntervalMs how often changed whole-session rows go out while a session runs
 * @param flushEvery     batches (or bytes of them) between two writes of a session's accumulators at most
 * @param keepWindows    closed windows per session the stats store keeps for queries
 * @param retentionMs    how long an ended session's rows and progress stay in the stores
 * @param batchTopic     the switch batches' topic, where a restore reads its redo entries back
 * @param statsTopic     the rows' topic
 */
record AggregateSettings(long windowNanos, long emitIntervalMs, RedoLog.Limit flushEvery, int keepWindows, long retentionMs, String batchTopic,
                         String statsTopic) {
    /** The bytes of batches a session takes between two writes of its accumulators, at most (and one more batch): what a restore takes again. */
    static final long REDO_MAX_BYTES = 128L << 20;

    static AggregateSettings from(Map<String, ?> config, long windowNanos, long emitIntervalMs) {
        int flushBatches = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_FLUSH_BATCHES,
                SwapstreamConfig.DEFAULT_FLUSH_BATCHES);
        if (flushBatches < 1 || flushBatches > SwapstreamConfig.REDO_SLOTS) {
            throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_FLUSH_BATCHES + " must be 1 to " + SwapstreamConfig.REDO_SLOTS);
        }
        int keepWindows = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_KEEP_WINDOWS,
                SwapstreamConfig.DEFAULT_KEEP_WINDOWS);
        if (keepWindows < 1) throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS + " must be at least 1");
        return new AggregateSettings(windowNanos, emitIntervalMs, new RedoLog.Limit(flushBatches, REDO_MAX_BYTES, 1), keepWindows, SwapstreamConfig.sessionRetentionMs(config),
                SwapstreamConfig.topic(config, SwapstreamConfig.SWITCH_BATCHES), SwapstreamConfig.topic(config, SwapstreamConfig.THREAD_STATS));
    }
}
