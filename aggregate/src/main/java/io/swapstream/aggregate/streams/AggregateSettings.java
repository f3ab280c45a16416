package io.swapstream.aggregate.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.stage.RedoLog;
import io.swapstream.stage.Topic;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The aggregate stage's settings, read and checked once from the Streams configuration.
 *
 * @param windowNanos    tumbling window (0: whole-session statistics only)
 * @param emitIntervalMs how often changed whole-session rows go out while a session runs
 * @param flushEvery     batches (or bytes of them) between two writes of a session's accumulators at most
 * @param keepWindows    closed windows per session the stats store keeps for queries
 * @param retentionMs    how long an ended session's rows and progress stay in the stores
 * @param batches        the switch batches, as published (a restore reads its redo entries back from there)
 * @param sessions       the decode stage's session records
 * @param stats          the rows
 * @param wakeEdges      who woke whom, per session and closed window
 * @param config         the configuration, for the stores' serdes
 */
public record AggregateSettings(long windowNanos, long emitIntervalMs, RedoLog.Limit flushEvery, int keepWindows, long retentionMs,
                                Topic<byte[]> batches, Topic<TraceSession> sessions, Topic<ThreadStats> stats, Topic<WakeEdge> wakeEdges,
                                Map<String, ?> config) {
    /** The bytes of batches a session takes between two writes of its accumulators, at most (and one more batch): what a restore takes again. */
    static final long REDO_MAX_BYTES = 128L << 20;

    public static AggregateSettings from(Map<String, ?> config) {
        long windowNanos = SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_WINDOW_NANOS, SwapstreamConfig.DEFAULT_AGGREGATE_WINDOW_NANOS);
        long emitIntervalMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS,
                SwapstreamConfig.DEFAULT_AGGREGATE_EMIT_INTERVAL_MS);
        if (windowNanos < 0) throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_WINDOW_NANOS + " must not be negative");
        if (emitIntervalMs < 1) throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS + " must be at least 1");
        int flushBatches = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_FLUSH_BATCHES,
                SwapstreamConfig.DEFAULT_FLUSH_BATCHES);
        if (flushBatches < 1 || flushBatches > SwapstreamConfig.REDO_SLOTS) {
            throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_FLUSH_BATCHES + " must be 1 to " + SwapstreamConfig.REDO_SLOTS);
        }
        int keepWindows = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.AGGREGATE_KEEP_WINDOWS,
                SwapstreamConfig.DEFAULT_KEEP_WINDOWS);
        if (keepWindows < 1) throw new IllegalArgumentException(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS + " must be at least 1");
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        return new AggregateSettings(windowNanos, emitIntervalMs, new RedoLog.Limit(flushBatches, REDO_MAX_BYTES, 1), keepWindows,
                SwapstreamConfig.sessionRetentionMs(config), Topic.of(topic(config, SwapstreamConfig.SWITCH_BATCHES), Serdes.ByteArray()),
                Topic.of(topic(config, SwapstreamConfig.SESSIONS), serdes.serde(TraceSession.class, config)),
                Topic.of(topic(config, SwapstreamConfig.THREAD_STATS), serdes.serde(ThreadStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.WAKE_EDGES), serdes.serde(WakeEdge.class, config)), config);
    }
}
