package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.aggregate.streams.AggregateSettings;
import io.swapstream.decode.streams.DecodeSettings;
import io.swapstream.schemas.SwapstreamConfig;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What a stage's --help says it defaults to is what its settings default to without the option. */
class StageDefaultsTest {
    private static Object cli(String stage, String option) {
        CommandLine.ParseResult parsed = Swapstream.commandLine().parseArgs(stage);
        return parsed.subcommand().commandSpec().findOption(option).getValue();
    }

    private static long millis(String stage, String option) {
        return ((Duration) cli(stage, option)).toMillis();
    }

    private static Object setting(ConfigDef def, String key) {
        return def.defaultValues().get(key);
    }

    @Test
    void eachStageOptionDefaultsAsItsSetting() {
        assertEquals(setting(DecodeSettings.CONFIG, SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS), millis("decode", "--idle-timeout"));
        assertEquals(setting(DecodeSettings.CONFIG, SwapstreamConfig.DECODE_MAX_LATENESS_MS), millis("decode", "--max-lateness"));
        assertEquals(setting(AggregateSettings.CONFIG, SwapstreamConfig.AGGREGATE_WINDOW_NANOS), ((Duration) cli("aggregate", "--window")).toNanos());
        assertEquals(setting(AggregateSettings.CONFIG, SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS), millis("aggregate", "--emit-interval"));
        assertEquals(setting(AggregateSettings.CONFIG, SwapstreamConfig.AGGREGATE_KEEP_WINDOWS), cli("aggregate", "--keep-windows"));
        assertEquals(setting(RollupSettings.CONFIG, SwapstreamConfig.ROLLUP_GRACE_MS), millis("rollup", "--grace"));
        assertEquals(setting(RollupSettings.CONFIG, SwapstreamConfig.ROLLUP_MAX_WAIT_MS), millis("rollup", "--max-wait"));
        for (String stage : new String[] {"decode", "aggregate", "rollup"}) {
            assertEquals(setting(SwapstreamConfig.stageConfig(), SwapstreamConfig.SESSION_RETENTION_MS), millis(stage, "--session-retention"));
        }
        // and a stage given no settings of its own takes those defaults
        assertEquals(DecodeSettings.from(Map.of()).idleTimeoutMs(), millis("decode", "--idle-timeout"));
    }
}
