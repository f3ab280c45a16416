package io.swapstream.cli;

import io.swapstream.ingest.TopicSetup;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code swapstream decode} and {@code swapstream aggregate}: one stage as a long-lived service. */
abstract class StageCommand implements Callable<Integer> {
    @Mixin KafkaOptions kafka;

    @Option(names = "--state-dir", defaultValue = "/tmp/swapstream-state", description = "Kafka Streams state directory")
    Path stateDir;

    @Option(names = "--application-id", defaultValue = "swapstream", description = "application id prefix; default ${DEFAULT-VALUE}")
    String applicationId;

    abstract String stage();

    abstract Topology topology(Properties config);

    @Override
    public Integer call() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrap()))) {
            TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication);
        }
        Properties config = StageConfig.streams(stage(), kafka.bootstrap(), applicationId, stateDir.resolve(stage()),
                kafka.prefix, Map.of());
        KafkaStreams streams = new KafkaStreams(topology(config), config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
        return 0;
    }

    @Command(name = "decode", description = "Run the decode stage (raw buffers to switches, sessions, threads) until stopped.")
    static final class Decode extends StageCommand {
        String stage() { return StageConfig.DECODE; }

        Topology topology(Properties config) { return Pipeline.decodeTopology(config); }
    }

    @Command(name = "aggregate", description = "Run the aggregate stage (switches to per-thread statistics) until stopped.")
    static final class Aggregate extends StageCommand {
        @Option(names = "--window", defaultValue = "60s", description = "tumbling window; default ${DEFAULT-VALUE}") String window;

        @Option(names = "--emit-interval", defaultValue = "1s", description = "how often changed statistics are emitted") String emit;

        String stage() { return StageConfig.AGGREGATE; }

        Topology topology(Properties config) {
            return Pipeline.aggregateTopology(config, Options.duration(window), Options.duration(emit) / 1_000_000);
        }
    }
}
