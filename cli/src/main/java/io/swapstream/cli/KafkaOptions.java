package io.swapstream.cli;

import io.swapstream.schemas.SwapstreamConfig;
import picocli.CommandLine.Option;

/** The options every Kafka-facing command shares; names match the configuration keys of docker-compose. */
final class KafkaOptions {
    @Option(names = {"--bootstrap-servers", "-b"}, description = "Kafka bootstrap servers; default: $KAFKA_BOOTSTRAP")
    String bootstrapServers;

    @Option(names = "--topic-prefix", defaultValue = SwapstreamConfig.DEFAULT_PREFIX, description = "topic name prefix; default ${DEFAULT-VALUE}")
    String prefix;

    @Option(names = "--partitions", defaultValue = "4", description = "partitions of created topics; default ${DEFAULT-VALUE}")
    int partitions;

    @Option(names = "--replication", defaultValue = "1", description = "replication factor of created topics; default ${DEFAULT-VALUE}")
    short replication;

    /** The bootstrap servers given, else $KAFKA_BOOTSTRAP; null when neither. */
    String bootstrapOrNull() {
        if (bootstrapServers != null) return bootstrapServers;
        String env = System.getenv("KAFKA_BOOTSTRAP");
        return env == null || env.isBlank() ? null : env;
    }

    String bootstrap() {
        String b = bootstrapOrNull();
        if (b == null) throw new IllegalArgumentException("no Kafka: give --bootstrap-servers or set KAFKA_BOOTSTRAP");
        return b;
    }
}
