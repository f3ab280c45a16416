package io.swapstream.cli;

import io.swapstream.schemas.SwapstreamConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real single-node Kafka (KRaft, broker and controller in one) in this JVM, on 127.0.0.1, with
 * its data in a temporary directory removed at close.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
    private final KafkaRaftServer server;
    private final Path dataDir;
    private final String bootstrap;

    private EmbeddedKafkaBroker(KafkaRaftServer server, Path dataDir, String bootstrap) {
        this.server = server;
        this.dataDir = dataDir;
        this.bootstrap = bootstrap;
    }

    public static EmbeddedKafkaBroker start() throws IOException {
        Path dir = Files.createTempDirectory("swapstream-kafka-");
        int port = freePort();
        int controllerPort = freePort();
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", dir.resolve("data").toString());
        p.put("num.partitions", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "4");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "4");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        // the default dedupe buffer takes 128 MiB of heap
        p.put("log.cleaner.dedupe.buffer.size", "2097152");
        p.put("message.max.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES + 1024));
        p.put("log.segment.bytes", String.valueOf(64 * 1024 * 1024));
        Path config = dir.resolve("server.properties");
        try (OutputStream out = Files.newOutputStream(config)) {
            p.store(out, "swapstream embedded broker");
        }
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int rc = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", config.toString(),
                "--standalone"}, new PrintStream(log, true, StandardCharsets.UTF_8));
        if (rc != 0) throw new IOException("formatting the embedded broker's storage failed: " + log);
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(p), Time.SYSTEM);
        server.startup();
        return new EmbeddedKafkaBroker(server, dir, "127.0.0.1:" + port);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public String bootstrapServers() { return bootstrap; }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        Directories.deleteTree(dataDir);
    }
}
