package io.swapstream.decode.streams;

import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.stage.RedoLog;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;

/**
 * The decode stage's settings, read and checked once from the Streams configuration.
 *
 * @param topics            what it reads and writes
 * @param batchRows         switches per batch at most
 * @param rows              also one record per switch on {@code etw.context-switches}
 * @param idleTimeoutMs     a session with no buffer for this long ends as incomplete
 * @param checkpointEvery   buffers (or bytes of them) between two decoder checkpoints at most
 * @param retentionMs       how long an ended session's progress stays
 * @param liveLimits        a live session's merge limits (a finished file's merge waits for its own lateness)
 */
public record DecodeSettings(DecodeTopics topics, int batchRows, boolean rows, long idleTimeoutMs, RedoLog.Limit checkpointEvery, long retentionMs,
                      MergeLimits liveLimits) {
    /**
     * The bytes of buffers a session decodes between two checkpoints, at most (and one more buffer), unless they are fewer
     * than {@value #MIN_BUFFERS_BY_BYTES} buffers: a restore decodes that again. A checkpoint encodes what the merge holds,
     * so 1 MiB buffers do not bring one every 32.
     */
    static final long CHECKPOINT_BYTES = 32L << 20;
    static final int MIN_BUFFERS_BY_BYTES = 128;

    /** The decode stage's own settings: type, default, check and meaning of each, in one place. */
    public static final ConfigDef CONFIG = SwapstreamConfig.stageConfig()
            .define(SwapstreamConfig.DECODE_BATCH_ROWS, Type.INT, SwapstreamConfig.DEFAULT_BATCH_ROWS, Range.atLeast(1), Importance.LOW,
                    "switches per batch at most")
            .define(SwapstreamConfig.DECODE_ROWS, Type.BOOLEAN, false, Importance.LOW, "also one record per switch on etw.context-switches")
            .define(SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS, Type.LONG, SwapstreamConfig.DEFAULT_SESSION_IDLE_TIMEOUT_MS, Range.atLeast(1),
                    Importance.MEDIUM, "a session with no buffer for this long ends as incomplete, ms")
            // the redo entries since the last checkpoint must fit the slots
            .define(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS, Type.INT, SwapstreamConfig.DEFAULT_CHECKPOINT_BUFFERS,
                    Range.between(1, SwapstreamConfig.REDO_SLOTS), Importance.LOW, "buffers between two checkpoints of a session's decoder")
            .define(SwapstreamConfig.DECODE_MAX_LATENESS_MS, Type.LONG, SwapstreamConfig.DEFAULT_DECODE_MAX_LATENESS_MS, Range.atLeast(1),
                    Importance.MEDIUM, "how long a live session's merge waits for a processor's buffer, ms")
            .define(SwapstreamConfig.DECODE_MAX_QUEUE_BYTES, Type.LONG, MergeLimits.defaultMaxQueueBytes(), Range.atLeast(1024),
                    Importance.MEDIUM, "bytes a session's merge may hold before its oldest items leave");

    public static DecodeSettings from(Map<String, ?> config) {
        AbstractConfig c = new AbstractConfig(CONFIG, config, false);
        return new DecodeSettings(DecodeTopics.from(config), c.getInt(SwapstreamConfig.DECODE_BATCH_ROWS),
                c.getBoolean(SwapstreamConfig.DECODE_ROWS), c.getLong(SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS),
                new RedoLog.Limit(c.getInt(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS), CHECKPOINT_BYTES, MIN_BUFFERS_BY_BYTES),
                c.getLong(SwapstreamConfig.SESSION_RETENTION_MS),
                MergeLimits.live(c.getLong(SwapstreamConfig.DECODE_MAX_LATENESS_MS) * 1_000_000L, c.getLong(SwapstreamConfig.DECODE_MAX_QUEUE_BYTES)));
    }
}
