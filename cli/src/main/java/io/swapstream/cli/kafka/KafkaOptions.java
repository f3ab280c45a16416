package io.swapstream.cli.kafka;

import io.swapstream.cli.Options;
import io.swapstream.local.StageConfig;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Option;

/** The options every Kafka-facing command shares; names match the configuration keys of docker-compose. */
public final class KafkaOptions {
    @Option(names = {"--bootstrap-servers", "-b"}, paramLabel = "HOST:PORT",
            description = "Kafka bootstrap servers, comma-separated; default: $KAFKA_BOOTSTRAP")
    String bootstrapServers;

    @Option(names = "--topic-prefix", defaultValue = SwapstreamConfig.DEFAULT_PREFIX, paramLabel = "PREFIX", description = "prefix of every topic name")
    public String prefix;

    @Option(names = "--partitions", defaultValue = "4", paramLabel = "N", description = "partitions of the topics this creates")
    public int partitions;

    @Option(names = "--replication", paramLabel = "N", description = "replication factor of the topics this creates (and the stages'"
            + " changelogs); default: the cluster's brokers, at most 3, with min.insync.replicas 2 at 3")
    Short replication;

    @Option(names = "--connect-timeout", defaultValue = "30s", paramLabel = "DURATION",
            description = "how long to wait for Kafka to answer before giving up")
    Duration connectTimeout;

    @Option(names = "--client-config", paramLabel = "FILE",
            description = "Kafka client properties (TLS, SASL, timeouts...) for every producer, consumer, admin and Kafka Streams client")
    Path clientConfig;

    @Option(names = "--schema-registry", paramLabel = "URL", description = "a schema registry with Confluent's API or Apicurio's"
            + " (schema.registry.url in --client-config): records are written in Confluent's wire format, their schemas registered"
            + " under TOPIC-value; without it, Avro single-object encoding. Records of either framing are read.")
    String schemaRegistry;

    private Map<String, Object> loaded;

    /** The bootstrap servers given, else $KAFKA_BOOTSTRAP; null when neither. */
    public String bootstrapOrNull() {
        if (bootstrapServers != null) return bootstrapServers;
        String env = System.getenv("KAFKA_BOOTSTRAP");
        return env == null || env.isBlank() ? null : env;
    }

    /** Checks every value without touching the network. */
    public void validate(boolean bootstrapRequired) {
        if (bootstrapRequired && bootstrapOrNull() == null) {
            throw new UserInputException("no Kafka: give --bootstrap-servers HOST:PORT or set KAFKA_BOOTSTRAP");
        }
        if (bootstrapOrNull() != null) KafkaReachability.parse(bootstrapOrNull());
        clientConfig();
        Options.atLeast("--partitions", partitions, 1);
        if (replication != null) Options.atLeast("--replication", replication, 1);
        connectTimeoutMs();
        if (prefix.isEmpty() || !prefix.matches("[A-Za-z0-9._-]+")) {
            throw new UserInputException("--topic-prefix: '" + prefix + "' may hold only letters, digits, '.', '_' and '-'");
        }
    }

    public long connectTimeoutMs() {
        return connectTimeout.toMillis();
    }

    /** Validates, waits until Kafka answers, and returns the bootstrap servers. */
    public String connect() {
        validate(true);
        String b = bootstrapOrNull();
        KafkaReachability.await(b, connectTimeoutMs(), clientConfig(), this::notice);
        return b;
    }

    /** A line on the command's stderr, at once. */
    public void notice(String line) {
        if (mixee == null) return;
        java.io.PrintWriter err = mixee.commandLine().getErr();
        err.println("swapstream: " + line);
        err.flush();
    }

    /** The command this mixin is part of: where its notices go. */
    @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
    picocli.CommandLine.Model.CommandSpec mixee;

    /** The properties of --client-config, or none. */
    public Map<String, Object> clientConfig() {
        if (loaded != null) return loaded;
        Map<String, Object> m = properties("--client-config", clientConfig);
        if (schemaRegistry != null) m.put(SwapstreamConfig.SCHEMA_REGISTRY_URL, registryUrl("--schema-registry", schemaRegistry));
        loaded = m;
        return m;
    }

    /** A schema registry's URL as given, checked. */
    static String registryUrl(String option, String url) {
        if (!url.matches("(?i)https?://[^/\\s]+(/\\S*)?")) throw new UserInputException(option + ": '" + url + "' is not an http:// or https:// URL");
        return url;
    }

    /** The properties of a file an option names, or none when it is null. */
    static Map<String, Object> properties(String option, Path file) {
        Map<String, Object> m = new HashMap<>();
        if (file == null) return m;
        if (!Files.isRegularFile(file)) throw new UserInputException(option + ": " + file + " is not a file");
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException | IllegalArgumentException e) {
            throw new UserInputException(option + ": " + file + " cannot be read as properties: " + e.getMessage());
        }
        p.forEach((k, v) -> m.put(k.toString(), v.toString()));
        return m;
    }

    /** The same as strings, for Kafka Streams overrides. */
    public Map<String, String> clientConfigStrings() {
        Map<String, String> m = new HashMap<>();
        clientConfig().forEach((k, v) -> m.put(k, v.toString()));
        return m;
    }

    /** The replication factor given, else the cluster's brokers, at most three. */
    public short replication(Admin admin) throws InterruptedException, ExecutionException {
        if (replication != null) return replication;
        return StageConfig.defaultReplication(admin.describeCluster().nodes().get().size());
    }

    /** Settings for an admin client that gives up after the connect timeout. */
    public Map<String, Object> admin(String bootstrap) {
        Map<String, Object> c = new HashMap<>(clientConfig());
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, Math.max(1000, connectTimeoutMs())));
        return c;
    }
}
