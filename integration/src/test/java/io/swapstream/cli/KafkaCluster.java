package io.swapstream.cli;

import io.swapstream.local.Directories;
import io.swapstream.local.EmbeddedKafkaBroker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * Three KafkaRaftServer nodes in this JVM on loopback, each broker and controller, with a static
 * three-voter quorum and the layout docker-compose.yml runs: replication 3, min.insync.replicas 2.
 * For the test of replication and leader failover where no Docker engine runs.
 */
final class KafkaCluster implements AutoCloseable {
    private final List<KafkaRaftServer> servers = new ArrayList<>();
    private final List<Boolean> running = new ArrayList<>();
    private final List<Integer> clientPorts = new ArrayList<>();
    private final Path dir;

    private KafkaCluster(Path dir) {
        this.dir = dir;
    }

    static KafkaCluster start(Path dir) throws Exception {
        KafkaCluster c = new KafkaCluster(dir);
        int[] client = {EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort()};
        int[] controller = {EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort()};
        String voters = "1@127.0.0.1:" + controller[0] + ",2@127.0.0.1:" + controller[1] + ",3@127.0.0.1:" + controller[2];
        String clusterId = Uuid.randomUuid().toString();
        List<KafkaConfig> configs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Path node = Files.createDirectories(dir.resolve("node" + (i + 1)));
            Properties p = EmbeddedKafkaBroker.nodeProperties(node, i + 1, client[i], controller[i], (short) 3);
            p.put("controller.quorum.voters", voters);
            // a stopped broker leaves the in-sync set quickly
            p.put("replica.lag.time.max.ms", "5000");
            p.put("broker.session.timeout.ms", "6000");
            p.put("broker.heartbeat.interval.ms", "1000");
            // a stop is a node gone: the controller fences it after the session timeout above and moves its leadership.
            // A controlled shutdown waits up to five minutes for the active controller's approval, and in this JVM never
            // gets it when the node stopped has itself become that controller since the test looked (ClusterIT took 315 s
            // once that way, against 16 s)
            p.put("controlled.shutdown.enable", "false");
            Path config = node.resolve("server.properties");
            try (OutputStream out = Files.newOutputStream(config)) {
                p.store(out, "swapstream test cluster node " + (i + 1));
            }
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            int rc = StorageTool.execute(new String[] {"format", "-t", clusterId, "-c", config.toString()},
                    new PrintStream(log, true, StandardCharsets.UTF_8));
            if (rc != 0) throw new IOException("formatting node " + (i + 1) + " failed: " + log);
            configs.add(KafkaConfig.fromProps(p));
            c.clientPorts.add(client[i]);
        }
        // a node's startup waits for a quorum of controllers: start them together
        List<CompletableFuture<KafkaRaftServer>> starting = new ArrayList<>();
        for (KafkaConfig config : configs) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                KafkaRaftServer s = new KafkaRaftServer(config, Time.SYSTEM);
                s.startup();
                return s;
            }));
        }
        for (CompletableFuture<KafkaRaftServer> f : starting) {
            c.servers.add(f.get());
            c.running.add(true);
        }
        return c;
    }

    String bootstrapServers() {
        StringBuilder b = new StringBuilder();
        for (int port : clientPorts) b.append(b.length() == 0 ? "" : ",").append("127.0.0.1:").append(port);
        return b.toString();
    }

    /** Stops node {@code id} (1 to 3): its partitions' leadership moves to the others. */
    void stop(int id) {
        KafkaRaftServer s = servers.get(id - 1);
        s.shutdown();
        s.awaitShutdown();
        running.set(id - 1, false);
    }

    @Override
    public void close() {
        // together: one by one, the last nodes would wait for a controller quorum they no longer have
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            if (running.get(i)) {
                KafkaRaftServer s = servers.get(i);
                stopping.add(CompletableFuture.runAsync(() -> {
                    s.shutdown();
                    s.awaitShutdown();
                }));
            }
        }
        CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new)).join();
        Directories.deleteTree(dir);
    }
}
