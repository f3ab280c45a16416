package io.swapstream.local;

import io.swapstream.schemas.SwapstreamConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real single-node Kafka (KRaft, broker and controller in one) in this JVM, on 127.0.0.1. Either
 * temporary (data removed at close) or on a data directory kept across restarts: its configuration,
 * ports included, is stored there at the first start and reused, so the controller's recorded
 * endpoint stays valid.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
    private final KafkaRaftServer server;
    private final Path dataDir;
    private final boolean temporary;
    private final String bootstrap;

    private EmbeddedKafkaBroker(KafkaRaftServer server, Path dataDir, boolean temporary, String bootstrap) {
        this.server = server;
        this.dataDir = dataDir;
        this.temporary = temporary;
        this.bootstrap = bootstrap;
    }

    /** A broker on free ports with its data in a temporary directory, removed at close. */
    public static EmbeddedKafkaBroker start() throws IOException {
        return start(Files.createTempDirectory("swapstream-kafka-"), 0, true);
    }

    /**
     * A broker whose data lives in {@code dataDir}: formatted at the first start, reused after.
     *
     * @param port the client port (0: a free one); on a directory used before, its stored port is kept
     *             unless another is given
     */
    public static EmbeddedKafkaBroker start(Path dataDir, int port, boolean temporary) throws IOException {
        return start(dataDir, port, temporary, null, Map.of());
    }

    /** As {@link #start(Path, int, boolean)}, with broker settings of {@code overrides} for this run (not stored). */
    public static EmbeddedKafkaBroker start(Path dataDir, int port, boolean temporary, Map<String, String> overrides) throws IOException {
        return start(dataDir, port, temporary, null, overrides);
    }

    /** A temporary broker on free ports that checks its clients' credentials and rights. */
    public static EmbeddedKafkaBroker startSecured(BrokerSecurity security) throws IOException {
        return start(Files.createTempDirectory("swapstream-kafka-"), 0, true, security, Map.of());
    }

    /**
     * As {@link #start(Path, int, boolean)}, with {@code security} (null: none). A directory formatted with it keeps it;
     * its users are given their passwords at the first start, and again (through the super user) at a later one.
     */
    public static EmbeddedKafkaBroker start(Path dataDir, int port, boolean temporary, BrokerSecurity security) throws IOException {
        return start(dataDir, port, temporary, security, Map.of());
    }

    private static EmbeddedKafkaBroker start(Path dataDir, int port, boolean temporary, BrokerSecurity security,
                                             Map<String, String> overrides) throws IOException {
        Files.createDirectories(dataDir);
        Path config = dataDir.resolve("server.properties");
        Properties p;
        boolean fresh = !Files.exists(config);
        if (fresh) {
            int client = port > 0 ? port : freePort();
            int controller = freePort();
            p = properties(dataDir, client, controller);
            if (security != null) security.apply(p, client, freePort(), controller);
            if (temporary) p.put("controlled.shutdown.enable", "false");
            try (OutputStream out = Files.newOutputStream(config)) {
                p.store(out, "swapstream broker");
            }
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            List<String> format = new ArrayList<>(List.of("format", "-t", Uuid.randomUuid().toString(), "-c", config.toString(), "--standalone"));
            if (security != null) format.addAll(security.formatArguments());
            int rc = StorageTool.execute(format.toArray(String[]::new), new PrintStream(log, true, StandardCharsets.UTF_8));
            if (rc != 0) throw new IOException("formatting the broker's storage in " + dataDir + " failed: " + log);
        } else {
            p = new Properties();
            try (InputStream in = Files.newInputStream(config)) {
                p.load(in);
            }
            int stored = Integer.parseInt(clientListener(p).replaceAll(".*:", ""));
            // a data directory moved elsewhere (a copy, a restore) keeps its data where it now is
            String data = dataDir.resolve("data").toString();
            boolean moved = !data.equals(p.getProperty("log.dirs"));
            if ((port > 0 && port != stored) || moved) {
                p.setProperty("log.dirs", data);
                // the client listener moves; the rest of the stored configuration, its security too, stays
                for (String key : port > 0 && port != stored ? List.of("listeners", "advertised.listeners") : List.<String>of()) {
                    p.setProperty(key, p.getProperty(key).replace("127.0.0.1:" + stored + ",", "127.0.0.1:" + port + ",")
                            .replaceAll("127\\.0\\.0\\.1:" + stored + "$", "127.0.0.1:" + port));
                }
                try (OutputStream out = Files.newOutputStream(config)) {
                    p.store(out, "swapstream broker");
                }
            }
            if (security != null && !p.containsKey("authorizer.class.name")) {
                throw new IOException(dataDir + " holds a broker without users; give users to a new --data-dir");
            }
        }
        p.putAll(overrides);
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(p), Time.SYSTEM);
        server.startup();
        String bootstrap = clientListener(p).replaceAll("^[A-Z_]+://", "");
        EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(server, dataDir, temporary, bootstrap);
        if (security != null && !fresh) {
            try {
                security.upsertUsers(bootstrap);
            } catch (Exception e) {
                broker.close();
                throw new IOException("the users could not be given their passwords (is " + security.superUser()
                        + "'s password the one it had?): " + e.getMessage(), e);
            }
        }
        return broker;
    }

    /** The first advertised listener: the one clients use. */
    private static String clientListener(Properties p) {
        return p.getProperty("advertised.listeners").split(",")[0];
    }

    /**
     * One node of a local cluster, broker and controller, whose quorum is the static voters
     * {@code controllers} ({@code ID@HOST:PORT,...}): formatted at its first start with a cluster id
     * every node derives from the same voters, reused after. Internal topics get as many copies as
     * there are voters, at most three. Its start waits for a quorum of the controllers.
     */
    public static EmbeddedKafkaBroker startNode(Path dataDir, int nodeId, int port, int controllerPort, String controllers)
            throws IOException {
        Files.createDirectories(dataDir);
        Path config = dataDir.resolve("server.properties");
        Properties p;
        if (!Files.exists(config)) {
            int voters = controllers.split(",").length;
            p = nodeProperties(dataDir, nodeId, port, controllerPort, StageConfig.defaultReplication(voters));
            p.put("controller.quorum.voters", controllers);
            try (OutputStream out = Files.newOutputStream(config)) {
                p.store(out, "swapstream broker, node " + nodeId + " of " + controllers);
            }
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            // "--name=value": a cluster id may begin with '-', which the tool would read as an option
            int rc = StorageTool.execute(new String[] {"format", "--cluster-id=" + clusterId(controllers), "--config=" + config},
                    new PrintStream(log, true, StandardCharsets.UTF_8));
            if (rc != 0) throw new IOException("formatting the node's storage in " + dataDir + " failed: " + log);
        } else {
            p = new Properties();
            try (InputStream in = Files.newInputStream(config)) {
                p.load(in);
            }
            String stored = p.getProperty("node.id");
            if (!String.valueOf(nodeId).equals(stored) || !controllers.equals(p.getProperty("controller.quorum.voters"))) {
                throw new IOException(dataDir + " holds node " + stored + " of " + p.getProperty("controller.quorum.voters")
                        + ", not node " + nodeId + " of " + controllers);
            }
        }
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(p), Time.SYSTEM);
        server.startup();
        return new EmbeddedKafkaBroker(server, dataDir, false, p.getProperty("advertised.listeners").replace("PLAINTEXT://", ""));
    }

    /** The cluster id every node of {@code controllers} formats its storage with, derived from them alone. */
    static String clusterId(String controllers) {
        java.util.UUID u = java.util.UUID.nameUUIDFromBytes(controllers.getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits()).toString();
    }

    private static Properties properties(Path dir, int port, int controllerPort) {
        Properties p = nodeProperties(dir, 1, port, controllerPort, (short) 1);
        p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        p.put("num.partitions", "1");
        // topics come from TopicSetup and Kafka Streams, with their settings: a typo'd reader creates nothing
        p.put("auto.create.topics.enable", "false");
        return p;
    }

    /**
     * One loopback KRaft node, broker and controller, whose internal topics have {@code replication}
     * copies (two in sync when there are three or more); the quorum is the caller's to add.
     */
    public static Properties nodeProperties(Path dir, int nodeId, int port, int controllerPort, short replication) {
        String inSync = String.valueOf(io.swapstream.ingest.TopicSetup.minInSync(replication));
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", String.valueOf(nodeId));
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", dir.resolve("data").toString());
        p.put("default.replication.factor", String.valueOf(replication));
        p.put("min.insync.replicas", inSync);
        p.put("offsets.topic.replication.factor", String.valueOf(replication));
        p.put("offsets.topic.num.partitions", "4");
        p.put("transaction.state.log.replication.factor", String.valueOf(replication));
        p.put("transaction.state.log.min.isr", inSync);
        p.put("transaction.state.log.num.partitions", "4");
        p.put("share.coordinator.state.topic.replication.factor", String.valueOf(replication));
        p.put("share.coordinator.state.topic.min.isr", inSync);
        p.put("group.initial.rebalance.delay.ms", "0");
        // the default dedupe buffer takes 128 MiB of heap
        p.put("log.cleaner.dedupe.buffer.size", "2097152");
        p.put("message.max.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES + 1024));
        p.put("log.segment.bytes", String.valueOf(64 * 1024 * 1024));
        p.put("log.cleaner.backoff.ms", "2000");
        return p;
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public String bootstrapServers() { return bootstrap; }

    public Path dataDir() { return dataDir; }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        if (temporary) Directories.deleteTree(dataDir);
    }
}
