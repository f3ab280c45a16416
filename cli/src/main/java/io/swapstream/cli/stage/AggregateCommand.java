package io.swapstream.cli.stage;

import io.swapstream.cli.Durations;
import io.swapstream.cli.Options;
import io.swapstream.http.StageHttp;
import io.swapstream.http.StatsApi;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "aggregate", defaultValueProvider = StageCommand.HttpDefault.class, description = "Run the aggregate stage (switches to per-thread statistics) until stopped.")
public final class AggregateCommand extends StageCommand {
    @Option(names = "--window", defaultValue = "60s", paramLabel = "DURATION", converter = Durations.Window.class,
            description = "tumbling window of the windowed statistics; 0s: whole-session statistics alone")
    Duration window;

    @Option(names = "--emit-interval", defaultValue = "10s", paramLabel = "DURATION", description = "how often the whole-session rows that changed are emitted (with --window, to the query store alone: the topic has the windows' rows, and each whole-session row once, final)")
    Duration emit;

    @Option(names = "--keep-windows", defaultValue = "60", paramLabel = "N", description = "closed windows per session the queries"
            + " keep (the topic has them all); a thread's answer says when earlier ones were dropped")
    int keepWindows;

    /** The tasks' row indexes, shared by the topology's processors and the query API. */
    final io.swapstream.aggregate.streams.RowIndexes indexes = new io.swapstream.aggregate.streams.RowIndexes();

    String stage() { return StageConfig.AGGREGATE; }

    String defaultHttp() { return "127.0.0.1:8080"; }

    @Override
    void routes(StageHttp server, KafkaStreams streams) {
        StatsApi api = new StatsApi(streams, indexes, advertised, server.scheme(), server.tls()).keeping(keepWindows);
        server.route("/api/", api::answer);
        // a session's trace as an .etl file, read from etw.raw-buffers by whichever instance is asked
        server.route(io.swapstream.http.EtlApi.PREFIX, new io.swapstream.http.EtlApi(bootstrap, kafka.prefix, kafka.clientConfig())::answer);
        server.staticFiles("/swapstream-page");
    }

    @Override
    void validate() {
        Options.atLeast("--keep-windows", keepWindows, 1);
    }

    @Override
    Map<String, String> stageSettings() {
        Map<String, String> m = new java.util.HashMap<>(Pipeline.aggregateSettings(window.toNanos(), emit.toMillis()));
        m.put(io.swapstream.schemas.SwapstreamConfig.AGGREGATE_KEEP_WINDOWS, String.valueOf(keepWindows));
        return m;
    }

    Topology topology(Properties config) {
        return Pipeline.aggregateTopology(config, indexes);
    }
}
