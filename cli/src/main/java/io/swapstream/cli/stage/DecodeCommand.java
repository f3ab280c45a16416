package io.swapstream.cli.stage;

import io.swapstream.cli.Options;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "decode", defaultValueProvider = StageCommand.HttpDefault.class, description = "Run the decode stage (raw buffers to switch batches, sessions, threads) until stopped.")
public final class DecodeCommand extends StageCommand {
    @Option(names = "--idle-timeout", defaultValue = "10m", paramLabel = "DURATION",
            description = "a session with no buffer for this long ends as incomplete")
    Duration idleTimeout;

    @Option(names = "--rows", description = "also write one record per switch to the context-switches topic")
    boolean rows;

    @Option(names = "--max-lateness", defaultValue = "5m", paramLabel = "DURATION", description = "a live session's merge waits"
            + " this long at most for a processor's buffer before it lets later switches out (one that then comes is counted"
            + " out of order and has no derived times); a finished file's merge waits for its own lateness")
    Duration maxLateness;

    @Option(names = "--max-merge-memory", paramLabel = "MIB", description = "MiB a session's merge may hold before its oldest"
            + " items leave; default a quarter of the JVM's maximum heap")
    Long maxMergeMiB;

    String stage() { return StageConfig.DECODE; }

    String defaultHttp() { return "127.0.0.1:8081"; }

    @Override
    void validate() {
        if (maxMergeMiB != null) Options.atLeast("--max-merge-memory", maxMergeMiB, 1);
    }

    @Override
    Map<String, String> stageSettings() {
        Map<String, String> m = new java.util.HashMap<>();
        m.put(io.swapstream.schemas.SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS,
                String.valueOf(idleTimeout.toMillis()));
        m.put(io.swapstream.schemas.SwapstreamConfig.DECODE_ROWS, String.valueOf(rows));
        m.put(io.swapstream.schemas.SwapstreamConfig.DECODE_MAX_LATENESS_MS,
                String.valueOf(Math.max(1, maxLateness.toMillis())));
        if (maxMergeMiB != null) {
            m.put(io.swapstream.schemas.SwapstreamConfig.DECODE_MAX_QUEUE_BYTES, String.valueOf(Math.multiplyExact(maxMergeMiB, 1L << 20)));
        }
        return m;
    }

    Topology topology(Properties config) { return Pipeline.decodeTopology(config); }
}
