package io.swapstream.aggregate.rollup.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.stage.Topic;
import java.util.Map;

/**
 * The rollup stage's settings, read and checked once from the Streams configuration.
 *
 * @param graceMs     a window's roll-up closes once no row for it has come for this long (wall clock)
 * @param maxWaitMs   a window waits at most this long for its live hosts once the first has moved past it
 * @param keepWindows closed windows the query stores keep
 * @param retentionMs how long closed windows are remembered (a row for one after that opens it again)
 * @param rows        the aggregate's rows, read
 * @param processes   the per-process roll-ups, written
 * @param hosts       the per-host roll-ups, written
 * @param wakeEdges   the aggregate's wake edges, read (for the query API)
 */
public record RollupSettings(long graceMs, long maxWaitMs, int keepWindows, long retentionMs, Topic<ThreadStats> rows, Topic<ProcessStats> processes,
                             Topic<HostStats> hosts, Topic<WakeEdge> wakeEdges) {

    public static RollupSettings from(Map<String, ?> config) {
        long graceMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.ROLLUP_GRACE_MS, SwapstreamConfig.DEFAULT_ROLLUP_GRACE_MS);
        int keep = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.ROLLUP_KEEP_WINDOWS, SwapstreamConfig.DEFAULT_ROLLUP_KEEP_WINDOWS);
        if (graceMs < 1) throw new IllegalArgumentException(SwapstreamConfig.ROLLUP_GRACE_MS + " must be at least 1");
        long maxWaitMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.ROLLUP_MAX_WAIT_MS, SwapstreamConfig.DEFAULT_ROLLUP_MAX_WAIT_MS);
        if (maxWaitMs < 1) throw new IllegalArgumentException(SwapstreamConfig.ROLLUP_MAX_WAIT_MS + " must be at least 1");
        if (keep < 1) throw new IllegalArgumentException(SwapstreamConfig.ROLLUP_KEEP_WINDOWS + " must be at least 1");
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        return new RollupSettings(graceMs, maxWaitMs, keep, SwapstreamConfig.sessionRetentionMs(config),
                Topic.of(topic(config, SwapstreamConfig.THREAD_STATS), serdes.serde(ThreadStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.PROCESS_STATS), serdes.serde(ProcessStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.HOST_STATS), serdes.serde(HostStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.WAKE_EDGES), serdes.serde(WakeEdge.class, config)));
    }
}
