package io.swapstream.cli.kafka;

import io.swapstream.cli.ProgressLine;
import io.swapstream.cli.Swapstream;
import io.swapstream.local.BrokerSecurity;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.ServiceException;
import io.swapstream.local.UserInputException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "broker", description = "A Kafka (KRaft) broker on 127.0.0.1 for local use, until stopped: a single node, or with"
        + " --node-id, --controller-port and --controllers one node of a local cluster; its data survives a restart on the same --data-dir.")
public final class BrokerCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--data-dir", defaultValue = "swapstream-broker", paramLabel = "DIR", description = "where the broker keeps its data and configuration")
    Path dataDir;

    @Option(names = "--port", defaultValue = "9092", paramLabel = "PORT", description = "client port on 127.0.0.1 (0: any free one)")
    int port;

    @Option(names = "--node-id", paramLabel = "N", description = "this node's id in a local cluster (each node is broker and controller)")
    Integer nodeId;

    @Option(names = "--controller-port", paramLabel = "PORT", description = "this node's controller port on 127.0.0.1, as in --controllers")
    Integer controllerPort;

    @Option(names = "--controllers", paramLabel = "ID@HOST:PORT,...", description = "the cluster's controllers, the same on every node,"
            + " e.g. 1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293")
    String controllers;

    @Option(names = "--add-user", paramLabel = "NAME:PASSWORD", description = "a SCRAM-SHA-512 user (repeatable); with users, clients"
            + " authenticate (SASL_PLAINTEXT), the broker checks ACLs, and nothing is allowed without one but to --super-user")
    List<String> addUsers = new ArrayList<>();

    @Option(names = "--users", paramLabel = "FILE", description = "SCRAM-SHA-512 users, a NAME:PASSWORD line each, as --add-user")
    Path usersFile;

    @Option(names = "--super-user", defaultValue = "admin", paramLabel = "NAME", description = "with users: the one allowed everything"
            + " (topics --create, acls --apply, users' credentials)")
    String superUser;

    /** The users given, as a broker's security; null without any. */
    BrokerSecurity security() {
        Map<String, String> users = new LinkedHashMap<>();
        if (usersFile != null) users.putAll(BrokerSecurity.usersFile(usersFile));
        for (String u : addUsers) {
            Map.Entry<String, String> e = BrokerSecurity.user(u, "--add-user");
            users.put(e.getKey(), e.getValue());
        }
        if (users.isEmpty()) return null;
        return new BrokerSecurity(superUser, users, BrokerSecurity.DEFAULT_REAUTH_MS);
    }

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) throw new UserInputException("--port must be between 0 and 65535, not " + port);
        if (Files.exists(dataDir) && !Files.isDirectory(dataDir)) throw new UserInputException("--data-dir: " + dataDir + " is not a directory");
        boolean node = clusterNode();
        BrokerSecurity security = security();
        if (node && security != null) throw new UserInputException("users go with a single-node broker, not --node-id");
        PrintWriter err = spec.commandLine().getErr();
        EmbeddedKafkaBroker broker;
        try {
            if (node) {
                err.printf("swapstream broker: node %d starting; it waits for a quorum of %s%n", nodeId, controllers);
                err.flush();
                broker = EmbeddedKafkaBroker.startNode(dataDir.toAbsolutePath(), nodeId, port, controllerPort, controllers);
            } else {
                broker = EmbeddedKafkaBroker.start(dataDir.toAbsolutePath(), port, false, security);
            }
        } catch (java.io.IOException e) {
            throw new UserInputException("--data-dir: " + e.getMessage());
        } catch (RuntimeException e) {
            throw new ServiceException("the broker did not start (is port " + port + " in use?): " + Swapstream.userMessage(e), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }));
        err.printf("swapstream broker: running on %s, data in %s (stop with Ctrl-C)%n", broker.bootstrapServers(), broker.dataDir());
        if (security != null) {
            err.printf("swapstream broker: SASL/%s with %d users, ACLs enforced, super user %s; its controller listener is PLAINTEXT"
                    + " on 127.0.0.1 and a super user too%n", BrokerSecurity.MECHANISM, security.users().size(), superUser);
        }
        err.flush();
        try (ProgressLine progress = new ProgressLine(err, "swapstream broker: ", () -> String.format("%s, %.1f MiB of records",
                broker.bootstrapServers(), size(broker.dataDir()) / 1048576.0))) {
            stopped.await();
        }
        return 0;
    }

    /** Whether the options make this one node of a cluster; checks they come together and agree. */
    private boolean clusterNode() {
        if (nodeId == null && controllerPort == null && controllers == null) return false;
        if (nodeId == null || controllerPort == null || controllers == null) {
            throw new UserInputException("a cluster node needs --node-id, --controller-port and --controllers together");
        }
        if (nodeId < 0) throw new UserInputException("--node-id must be 0 or more, not " + nodeId);
        if (controllerPort < 1 || controllerPort > 65535) throw new UserInputException("--controller-port must be between 1 and 65535, not " + controllerPort);
        if (port == 0) throw new UserInputException("--port: a cluster node needs a fixed port, not 0");
        boolean listed = false;
        for (String voter : controllers.split(",")) {
            if (!voter.matches("[0-9]+@[^:@,]+:[0-9]+")) {
                throw new UserInputException("--controllers: '" + voter + "' is not ID@HOST:PORT");
            }
            if (voter.startsWith(nodeId + "@")) {
                listed = true;
                if (!voter.endsWith(":" + controllerPort)) {
                    throw new UserInputException("--controllers names node " + nodeId + " at " + voter + ", not at --controller-port " + controllerPort);
                }
            }
        }
        if (!listed) throw new UserInputException("--controllers does not name node " + nodeId);
        return true;
    }

    /**
     * The bytes of the log segments: a partition's index files are preallocated (10 MiB each, mostly holes), so
     * every file's length added up overstated a 77 MiB directory as 4,252 MiB.
     */
    public static long size(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".log")).mapToLong(p -> p.toFile().length()).sum();
        } catch (Exception e) {
            return 0;
        }
    }
}
