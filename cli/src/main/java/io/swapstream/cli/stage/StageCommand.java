package io.swapstream.cli.stage;

import static io.swapstream.stage.StageSensors.*;

import io.swapstream.cli.Options;
import io.swapstream.cli.ProgressLine;
import io.swapstream.cli.Swapstream;
import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.Denied;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.http.HttpTls;
import io.swapstream.http.HttpUsers;
import io.swapstream.http.StageHttp;
import io.swapstream.http.StageMetrics;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.StageConfig;
import io.swapstream.local.UserInputException;
import io.swapstream.stage.ThreadReplacementPolicy;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code swapstream decode} and {@code swapstream aggregate}: one stage as a long-lived service. */
abstract class StageCommand implements Callable<Integer>, Denials {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--state-dir", defaultValue = "/tmp/swapstream-state", paramLabel = "DIR",
            description = "Kafka Streams state directory (the stage's own subdirectory is used)")
    Path stateDir;

    @Option(names = "--application-id", defaultValue = "swapstream",
            description = "application id prefix; the stage name is appended")
    String applicationId;

    @Option(names = "--http", paramLabel = "HOST:PORT",
            description = "HTTP address: /health, /metrics, and on the aggregate and the rollup their query API and page;"
                    + " port 0 takes any free port")
    String http;

    /** Each stage's own HTTP address as the default of --http, so that its --help shows its own. */
    static final class HttpDefault implements picocli.CommandLine.IDefaultValueProvider {
        @Override
        public String defaultValue(picocli.CommandLine.Model.ArgSpec arg) {
            if (arg instanceof picocli.CommandLine.Model.OptionSpec o && o.longestName().equals("--http")
                    && arg.command().userObject() instanceof StageCommand s) {
                return s.defaultHttp();
            }
            return null;
        }
    }

    @Option(names = "--http-advertised", paramLabel = "HOST:PORT",
            description = "HTTP address other instances use to reach this one's stores; default: the --http"
                    + " address, with this machine's name when it binds every interface")
    String httpAdvertised;

    @Option(names = "--http-tls", paramLabel = "KEYSTORE",
            description = "serve HTTPS with the key and certificate of this PKCS12 (or .jks) key store, its password in"
                    + " $SWAPSTREAM_HTTP_TLS_PASSWORD; instances of one application trust its certificates when they ask each other")
    Path httpTls;

    @Option(names = "--http-users", paramLabel = "FILE",
            description = "ask for a user of this file (basic authentication) on every route but /health; a line per user,"
                    + " as swapstream http-user prints it. Beyond loopback it needs --http-tls (or --http-users-in-clear)")
    Path httpUsers;

    @Option(names = "--http-users-in-clear",
            description = "let --http-users log in over plain HTTP beyond loopback, their passwords crossing the network in clear"
                    + " (behind a TLS-terminating proxy on the same host, say); without it such a stage refuses to start")
    boolean httpUsersInClear;

    @Option(names = "--instance-id", paramLabel = "ID",
            description = "this instance's lasting id in the stage's consumer group (static membership): restarted with the"
                    + " same id, it takes its partitions back at once, without waiting for the group's session timeout."
                    + " Default: from this machine's name and --state-dir, so it lasts across restarts and two instances"
                    + " on one machine differ")
    String instanceId;

    @Option(names = "--session-retention", defaultValue = "7d", paramLabel = "DURATION",
            description = "how long an ended session stays in the stage's stores (and queries); the topics keep it for the broker's retention")
    Duration retention;

    @Option(names = "--all-kafka-metrics", description = "/metrics also shows every Kafka client metric, with Kafka's labels (client, thread"
            + " and task ids, new at each start); without it, only the few an operator watches, per stage")
    boolean allKafkaMetrics;

    /** This instance's HTTP address in Kafka Streams metadata. */
    String advertised;

    abstract String stage();

    abstract String defaultHttp();

    /** Routes beyond /health and /metrics. */
    void routes(StageHttp server, KafkaStreams streams) { }

    /** The Kafka the stage runs on, once connected: where a route that reads a topic itself goes. */
    String bootstrap;

    /** What the stage runs beside its Streams application, closed when it stops (null: nothing). */
    AutoCloseable beside(StageMetrics metrics, Properties config, String bootstrap) { return null; }

    /** Checks the stage's own options before anything starts. */
    void validate() { }

    /** The stage's own settings, as configuration keys. */
    Map<String, String> stageSettings() { return Map.of(); }

    abstract Topology topology(Properties config);

    @Override
    public Integer call() throws Exception {
        validate();
        long retentionMs = retention.toMillis();
        String httpAddress = http == null ? defaultHttp() : http;
        Options.hostPort("--http", httpAddress);
        if (httpAdvertised != null) Options.hostPort("--http-advertised", httpAdvertised);
        HttpTls tls = httpTls == null ? null : HttpTls.load(httpTls);
        HttpUsers users = httpUsers == null ? null : HttpUsers.read(httpUsers);
        // before Kafka: a stage that would take passwords in clear does not start at all
        StageHttp.refuseUsersInClear(httpAddress, tls, users, httpUsersInClear);
        kafka.validate(true);
        String bootstrap = kafka.connect();
        this.bootstrap = bootstrap;
        StageHttp server;
        try {
            server = StageHttp.bind(httpAddress, tls, users, httpUsersInClear).describingErrors(Swapstream::userMessage);
        } catch (java.io.IOException e) {
            throw new UserInputException("--http " + httpAddress + ": cannot listen there (" + e.getMessage() + ")");
        }
        Map<String, String> overrides = new java.util.HashMap<>(kafka.clientConfigStrings());
        overrides.put(io.swapstream.schemas.SwapstreamConfig.SESSION_RETENTION_MS, String.valueOf(Math.max(1, retentionMs)));
        overrides.putAll(stageSettings());
        // other instances reach this one's stores through its HTTP address
        advertised = httpAdvertised != null ? httpAdvertised : server.address();
        overrides.put(org.apache.kafka.streams.StreamsConfig.APPLICATION_SERVER_CONFIG, advertised);
        // static membership (KIP-345); Kafka Streams appends each stream thread's number
        overrides.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
                instanceId != null ? instanceId : StageConfig.instanceId(stage(), stateDir));
        Properties config;
        Topology topology;
        io.swapstream.schemas.serde.SchemaRegistry registry;
        try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
            short replication = kafka.replication(admin);
            config = StageConfig.streams(stage(), bootstrap, applicationId, stateDir.resolve(stage()), kafka.prefix, replication, overrides);
            topology = topology(config);
            registry = StageConfig.registerSchemas(StageConfig.asMap(config), kafka.prefix);
            if (registry != null) {
                spec.commandLine().getErr().printf("swapstream %s: records in Confluent's wire format, schemas under TOPIC-value in %s%n",
                        stage(), registry.url());
            }
            int partitions = TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, replication,
                    RoleAcls.suffixes(RoleAcls.ofStage(stage())));
            StageConfig.createChangelogs(admin, topology, config, partitions);
        }
        PrintWriter err = spec.commandLine().getErr();
        KafkaStreams streams = new KafkaStreams(topology, config);
        CompletableFuture<Integer> stopped = new CompletableFuture<>();
        // a broker restart can leave a commit failing on a transaction the broker no longer knows:
        // a new thread restores the tasks from their changelogs (each session's state in one store)
        ThreadReplacementPolicy replacements = new ThreadReplacementPolicy();
        Denied denied = denied();
        streams.setUncaughtExceptionHandler(e -> {
            // a right missing now is missing at the next try too: the stage stops and says which, rather than retry unseen
            String refused = denied.line(e);
            if (refused != null) {
                err.println("swapstream " + stage() + ": stopping: " + refused);
                if (System.getenv("SWAPSTREAM_DEBUG") != null) e.printStackTrace(err);
                err.flush();
                stopped.complete(Swapstream.EXIT_FAILURE);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            }
            if (replacements.replace(e, System.currentTimeMillis())) {
                err.println("swapstream " + stage() + ": " + Swapstream.userMessage(e)
                        + "; a new stream thread goes on from the last commit");
                err.flush();
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
            }
            err.println("swapstream " + stage() + ": stopping: " + Swapstream.userMessage(e));
            if (System.getenv("SWAPSTREAM_DEBUG") != null) e.printStackTrace(err);
            err.flush();
            stopped.complete(Swapstream.EXIT_FAILURE);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                err.printf("swapstream %s: running (application %s, Kafka %s)%n", stage(),
                        config.get("application.id"), bootstrap);
                err.flush();
            } else if (now == KafkaStreams.State.ERROR) {
                stopped.complete(Swapstream.EXIT_FAILURE);
            }
        });
        // a planned stop leaves the group, so its partitions move at once rather than after the session timeout
        CloseOptions leave = CloseOptions.timeout(Duration.ofSeconds(30))
                .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP);
        java.util.concurrent.atomic.AtomicReference<ProgressLine> progressLine = new java.util.concurrent.atomic.AtomicReference<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // a signal (SIGTERM, Ctrl-C) rather than the stage's own end: say so last, once its work is committed
            boolean signalled = !stopped.isDone();
            String last = signalled ? progress(streams, stage()) : null;
            ProgressLine running = progressLine.get();
            if (running != null) running.close(); // no progress line after the last
            streams.close(leave);
            stopped.complete(0);
            if (signalled) {
                err.printf("swapstream %s: stopped by a signal; its work is committed and its partitions handed over (%s)%n", stage(), last);
                err.flush();
            }
        }));
        int status;
        try (StageMetrics metrics = new StageMetrics(streams, stage(), allKafkaMetrics); StageHttp open = server;
             AutoCloseable besides = beside(metrics, config, bootstrap)) {
            if (registry != null) metrics.schemaRegistry(registry);
            server.standard(streams, metrics);
            routes(server, streams);
            server.start();
            err.printf("swapstream %s: HTTP on %s://%s/ (/health, /metrics)%n", stage(), server.scheme(), server.address());
            String exposure = server.exposure();
            if (exposure != null) err.printf("swapstream %s: warning: HTTP on %s is beyond loopback: %s%n", stage(), httpAddress, exposure);
            err.flush();
            streams.start();
            try (ProgressLine progress = new ProgressLine(err, "swapstream " + stage() + ": ", () -> progress(streams, stage()))) {
                progressLine.set(progress);
                status = stopped.get();
            }
            streams.close(leave);
        }
        return status;
    }

    @Override
    public Denied denied() {
        return Denied.of(RoleAcls.ofStage(stage()), kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, applicationId, null, null));
    }

    /** Records in and out, sessions, lag: what an operator wants to see every few seconds. */
    static String progress(KafkaStreams streams, String stage) {
        java.util.function.ToLongFunction<String> n = name -> (long) StageMetrics.total(streams, stage, name + "-total");
        long open = (long) StageMetrics.combine(streams, stage, SESSIONS_OPEN, Double::sum);
        if (stage.equals(StageConfig.DECODE)) {
            long outOfOrder = n.applyAsLong(SWITCHES_OUT_OF_ORDER);
            return String.format("%s; %d buffers in, %d switches out, %d sessions open, %d ended, %d dead letters%s, lag %.0f records",
                    streams.state(), n.applyAsLong(BUFFERS_IN), n.applyAsLong(SWITCHES_OUT), open, n.applyAsLong(SESSIONS_ENDED),
                    n.applyAsLong(DEAD_LETTERS), outOfOrder == 0 ? "" : ", " + outOfOrder + " switches out of order", StageMetrics.lag(streams));
        }
        if (stage.equals(StageConfig.ROLLUP)) {
            return String.format("%s; %d thread-window rows in, %d late (revised), %d roll-up rows out (%d revisions), %d windows"
                    + " closed, lag %.0f records", streams.state(), n.applyAsLong(ROWS_IN), n.applyAsLong(ROLLUP_LATE_ROWS),
                    n.applyAsLong(ROLLUPS_OUT), n.applyAsLong(ROLLUP_REVISIONS_OUT), n.applyAsLong(WINDOWS_CLOSED), StageMetrics.lag(streams));
        }
        return String.format("%s; %d switches in, %d rows out, %d windows closed, %d sessions open, %d ended, lag %.0f records",
                streams.state(), n.applyAsLong(SWITCHES_IN), n.applyAsLong(STATS_OUT), n.applyAsLong(WINDOWS_CLOSED), open,
                n.applyAsLong(SESSIONS_ENDED), StageMetrics.lag(streams));
    }
}
