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
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;

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

    /** The rollup stage's own settings: type, default, check and meaning of each, in one place. */
    public static final ConfigDef CONFIG = SwapstreamConfig.stageConfig()
            .define(SwapstreamConfig.ROLLUP_GRACE_MS, Type.LONG, SwapstreamConfig.DEFAULT_ROLLUP_GRACE_MS, Range.atLeast(1), Importance.MEDIUM,
                    "a window's roll-up closes once no row for it has come for this long, ms")
            .define(SwapstreamConfig.ROLLUP_MAX_WAIT_MS, Type.LONG, SwapstreamConfig.DEFAULT_ROLLUP_MAX_WAIT_MS, Range.atLeast(1),
                    Importance.MEDIUM, "how long a window waits for its live hosts once the first has moved past it, ms")
            .define(SwapstreamConfig.ROLLUP_KEEP_WINDOWS, Type.INT, SwapstreamConfig.DEFAULT_ROLLUP_KEEP_WINDOWS, Range.atLeast(1),
                    Importance.LOW, "closed windows the query stores keep");

    public static RollupSettings from(Map<String, ?> config) {
        AbstractConfig c = new AbstractConfig(CONFIG, config, false);
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        return new RollupSettings(c.getLong(SwapstreamConfig.ROLLUP_GRACE_MS), c.getLong(SwapstreamConfig.ROLLUP_MAX_WAIT_MS),
                c.getInt(SwapstreamConfig.ROLLUP_KEEP_WINDOWS), c.getLong(SwapstreamConfig.SESSION_RETENTION_MS),
                Topic.of(topic(config, SwapstreamConfig.THREAD_STATS), serdes.serde(ThreadStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.PROCESS_STATS), serdes.serde(ProcessStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.HOST_STATS), serdes.serde(HostStats.class, config)),
                Topic.of(topic(config, SwapstreamConfig.WAKE_EDGES), serdes.serde(WakeEdge.class, config)));
    }
}
