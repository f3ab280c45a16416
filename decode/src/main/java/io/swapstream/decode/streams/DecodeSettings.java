package io.swapstream.decode.streams;

import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.stage.RedoLog;
import java.util.Map;

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

    public static DecodeSettings from(Map<String, ?> config) {
        int batchRows = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_BATCH_ROWS, SwapstreamConfig.DEFAULT_BATCH_ROWS);
        long idle = SwapstreamConfig.longSetting(config, SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS,
                SwapstreamConfig.DEFAULT_SESSION_IDLE_TIMEOUT_MS);
        int checkpointBuffers = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS,
                SwapstreamConfig.DEFAULT_CHECKPOINT_BUFFERS);
        long maxLatenessMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_MAX_LATENESS_MS,
                SwapstreamConfig.DEFAULT_DECODE_MAX_LATENESS_MS);
        long maxQueueBytes = SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_MAX_QUEUE_BYTES, MergeLimits.defaultMaxQueueBytes());
        if (batchRows < 1) throw new IllegalArgumentException(SwapstreamConfig.DECODE_BATCH_ROWS + " must be at least 1");
        if (idle < 1) throw new IllegalArgumentException(SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS + " must be at least 1");
        // the redo entries since the last checkpoint must fit the slots
        if (checkpointBuffers < 1 || checkpointBuffers > SwapstreamConfig.REDO_SLOTS) {
            throw new IllegalArgumentException(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS + " must be 1 to " + SwapstreamConfig.REDO_SLOTS);
        }
        if (maxLatenessMs < 1) throw new IllegalArgumentException(SwapstreamConfig.DECODE_MAX_LATENESS_MS + " must be at least 1");
        if (maxQueueBytes < 1024) throw new IllegalArgumentException(SwapstreamConfig.DECODE_MAX_QUEUE_BYTES + " must be at least 1024");
        return new DecodeSettings(DecodeTopics.from(config), batchRows,
                SwapstreamConfig.flag(config, SwapstreamConfig.DECODE_ROWS), idle,
                new RedoLog.Limit(checkpointBuffers, CHECKPOINT_BYTES, MIN_BUFFERS_BY_BYTES),
                SwapstreamConfig.sessionRetentionMs(config), MergeLimits.live(maxLatenessMs * 1_000_000L, maxQueueBytes));
    }
}
