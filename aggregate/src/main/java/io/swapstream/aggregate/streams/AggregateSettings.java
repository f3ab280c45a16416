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
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The aggregate stage's settings, read and checked once from the Streams configuration.
 *
 * @param windowNanos    tumbling window (0: whole-session statistics only)
 * @param emitIntervalMs how often changed whole-session rows go out while a session runs (with windows, to the query store)
 * @param flushEvery     batches (or bytes of them) between two writes of a session's accumulators at most
 * @param flushTraceNanos trace time between two writes of a session's accumulators at most (with windows, at a close)
 * @param keepWindows    closed windows per session the stats store keeps for queries
 * @param retentionMs    how long an ended session's rows and progress stay in the stores
 * @param batches        the switch batches, as published (a restore reads its redo entries back from there)
 * @param sessions       the decode stage's session records
 * @param stats          the rows
 * @param wakeEdges      who woke whom, per session and closed window
 * @param config         the configuration, for the stores' serdes
 */
public record AggregateSettings(long windowNanos, long emitIntervalMs, RedoLog.Limit flushEvery, long flushTraceNanos, int keepWindows, long retentionMs,
                                Topic<byte[]> batches, Topic<TraceSession> sessions, Topic<ThreadStats> stats, Topic<WakeEdge> wakeEdges,
                                Map<String, ?> config) {
    /** The bytes of batches a session takes between two writes of its accumulators, at most (and one more batch): what a restore takes again. */
    static final long REDO_MAX_BYTES = 128L << 20;

    /** The aggregate stage's own settings: type, default, check and meaning of each, in one place. */
    public static final ConfigDef CONFIG = SwapstreamConfig.stageConfig()
            .define(SwapstreamConfig.AGGREGATE_WINDOW_NANOS, Type.LONG, SwapstreamConfig.DEFAULT_AGGREGATE_WINDOW_NANOS, Range.atLeast(0),
                    Importance.HIGH, "tumbling window of the windowed statistics, ns; 0: whole-session statistics alone")
            .define(SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS, Type.LONG, SwapstreamConfig.DEFAULT_AGGREGATE_EMIT_INTERVAL_MS,
                    Range.atLeast(1), Importance.MEDIUM, "how often changed whole-session rows go out while a session runs, ms (with windows, to the query store alone)")
            // the redo entries since the last flush must fit the slots
            .define(SwapstreamConfig.AGGREGATE_FLUSH_BATCHES, Type.INT, SwapstreamConfig.DEFAULT_FLUSH_BATCHES,
                    Range.between(1, SwapstreamConfig.REDO_SLOTS), Importance.LOW, "batches between two writes of a session's accumulators")
            .define(SwapstreamConfig.AGGREGATE_FLUSH_TRACE_MS, Type.LONG, SwapstreamConfig.DEFAULT_FLUSH_TRACE_MS, Range.atLeast(1),
                    Importance.LOW, "trace time between two writes of a session's accumulators, ms (with windows, at the first close this long after"
                            + " the last): threads that stopped running leave memory at a write")
            .define(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS, Type.INT, SwapstreamConfig.DEFAULT_KEEP_WINDOWS, Range.atLeast(1),
                    Importance.LOW, "closed windows the query stores keep");

    public static AggregateSettings from(Map<String, ?> config) {
        AbstractConfig c = new AbstractConfig(CONFIG, config, false);
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        return new AggregateSettings(c.getLong(SwapstreamConfig.AGGREGATE_WINDOW_NANOS), c.getLong(SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS),
                new RedoLog.Limit(c.getInt(SwapstreamConfig.AGGREGATE_FLUSH_BATCHES), REDO_MAX_BYTES, 1),
                c.getLong(SwapstreamConfig.AGGREGATE_FLUSH_TRACE_MS) * 1_000_000L,
                c.getInt(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS), c.getLong(SwapstreamConfig.SESSION_RETENTION_MS),
                Topic.of(topic(config, SwapstreamConfig.SWITCH_BATCHES), Serdes.ByteArray()),
                Topic.of(topic(config, SwapstreamConfig.SESSIONS), serdes.serde(TraceSession.class, config)),
                Topic.of(topic(config, SwapstreamConfig.THREAD_STATS), serdes.serde(ThreadStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.WAKE_EDGES), serdes.serde(WakeEdge.class, config)), config);
    }
}
