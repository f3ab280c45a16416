package io.swapstream.cli.stage;

import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.cli.Options;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.http.Peers;
import io.swapstream.http.RollupApi;
import io.swapstream.http.RollupMetrics;
import io.swapstream.http.RollupRowsFeed;
import io.swapstream.http.StageHttp;
import io.swapstream.http.StageMetrics;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "rollup", defaultValueProvider = StageCommand.HttpDefault.class, description = "Run the rollup stage (final window rows to per-process and per-host roll-ups across"
        + " hosts) until stopped.")
public final class RollupCommand extends StageCommand {
    @Option(names = "--max-wait", defaultValue = "2m", paramLabel = "DURATION", description = "once a host has moved past a window,"
            + " the window waits at most this long for the other live hosts (each judged by its own rows); a row that comes"
            + " later is merged into a revision of the window's rows, never dropped")
    Duration maxWait;

    @Option(names = "--grace", defaultValue = "2m", paramLabel = "DURATION", description = "a window's roll-up also closes once no"
            + " row for it has come for this long")
    Duration grace;

    @Option(names = "--metrics-processes", defaultValue = "100", paramLabel = "N", description = "process names with series of"
            + " their own in /metrics' fleet histograms: those with the most ready time lately; the rest add up under"
            + " process=\"_other\"")
    int metricsProcesses;

    @Option(names = "--metrics-hosts", defaultValue = "1000", paramLabel = "N", description = "hosts with series of their own in"
            + " /metrics' fleet histograms, as --metrics-processes")
    int metricsHosts;

    @Option(names = "--aggregate-page", defaultValue = "http://127.0.0.1:8080/", paramLabel = "URL",
            description = "the aggregate's page, where the fleet page sends a click on a host")
    String aggregatePage;

    String stage() { return StageConfig.ROLLUP; }

    String defaultHttp() { return "127.0.0.1:8082"; }

    @Override
    void validate() {
        Options.atLeast("--metrics-processes", metricsProcesses, 0);
        Options.atLeast("--metrics-hosts", metricsHosts, 0);
    }

    @Override
    AutoCloseable beside(StageMetrics metrics, Properties config, String bootstrap) {
        RollupMetrics fleet = new RollupMetrics(metricsProcesses, metricsHosts);
        metrics.add(fleet);
        Map<String, Object> client = new java.util.HashMap<>(kafka.clientConfig());
        client.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return new RollupRowsFeed(client, config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + RoleAcls.FLEET_METRICS_GROUP_SUFFIX,
                RollupSettings.from(StageConfig.asMap(config)), fleet).start();
    }

    @Override
    Map<String, String> stageSettings() {
        return Map.of(io.swapstream.schemas.SwapstreamConfig.ROLLUP_GRACE_MS,
                String.valueOf(Math.max(1, grace.toMillis())),
                io.swapstream.schemas.SwapstreamConfig.ROLLUP_MAX_WAIT_MS,
                String.valueOf(Math.max(1, maxWait.toMillis())));
    }

    @Override
    void routes(StageHttp server, KafkaStreams streams) {
        RollupApi api = new RollupApi(streams, new Peers(streams, advertised, server.scheme(), server.tls()), aggregatePage);
        server.route("/api/", api::answer);
        // a session's trace as an .etl file, read from etw.raw-buffers by whichever instance is asked
        server.route(io.swapstream.http.EtlApi.PREFIX, new io.swapstream.http.EtlApi(bootstrap, kafka.prefix, kafka.clientConfig())::answer);
        server.staticFiles("/swapstream-fleet");
    }

    Topology topology(Properties config) { return Pipeline.rollupTopology(config, null); }
}
