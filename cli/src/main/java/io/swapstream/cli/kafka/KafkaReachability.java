package io.swapstream.cli.kafka;

import io.swapstream.local.ServiceException;
import io.swapstream.local.UserInputException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/**
 * Checks that Kafka answers before a command starts work, and says why not in words: the name did
 * not resolve, the connection was refused, nobody answered, or something answered that is not Kafka.
 * Waits up to the connect timeout, so a broker that is still starting is waited for.
 */
public final class KafkaReachability {
    private KafkaReachability() {}

    record Server(String host, int port) {
        @Override
        public String toString() { return host + ":" + port; }
    }

    /** The servers of a bootstrap list, each HOST:PORT. */
    static List<Server> parse(String bootstrap) {
        List<Server> out = new ArrayList<>();
        for (String part : bootstrap.split(",")) {
            String s = part.trim();
            int colon = s.lastIndexOf(':');
            int port = -1;
            if (colon > 0) {
                try {
                    port = Integer.parseInt(s.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
            }
            if (port < 1 || port > 65535) {
                throw new UserInputException("--bootstrap-servers: '" + s + "' is not HOST:PORT");
            }
            String host = s.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
            out.add(new Server(host, port));
        }
        return out;
    }

    /**
     * Returns once one of the servers answers as a Kafka broker.
     *
     * @throws ServiceException naming the servers and what went wrong, after {@code timeoutMs}
     */
    public static void await(String bootstrap, long timeoutMs, Map<String, Object> clientConfig) {
        await(bootstrap, timeoutMs, clientConfig, line -> { });
    }

    /**
     * As {@link #await(String, long, Map)}, telling {@code notice} at once, in one line, the first time the servers do not
     * answer (refused, no answer, not Kafka): the wait then goes on quietly until the timeout.
     */
    public static void await(String bootstrap, long timeoutMs, Map<String, Object> clientConfig, java.util.function.Consumer<String> notice) {
        List<Server> servers = parse(bootstrap);
        boolean told = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        String why;
        while (true) {
            List<String> problems = new ArrayList<>();
            boolean listening = false;
            for (Server s : servers) {
                InetAddress[] addresses;
                try {
                    addresses = InetAddress.getAllByName(s.host());
                } catch (UnknownHostException e) {
                    problems.add("the name " + s.host() + " did not resolve");
                    continue;
                }
                String problem = connect(s, addresses[0], remainingMs(deadline));
                if (problem == null) listening = true;
                else problems.add(problem);
            }
            if (listening) {
                String notKafka = describeCluster(bootstrap, remainingMs(deadline), clientConfig);
                if (notKafka == null) return;
                problems.add(notKafka);
            }
            why = String.join("; ", problems);
            if (problems.stream().allMatch(p -> p.contains("did not resolve"))) {
                throw new ServiceException("cannot reach Kafka at " + bootstrap + ": " + why);
            }
            if (!told) {
                told = true;
                notice.accept(String.format("cannot reach Kafka at %s yet: %s; trying again for up to %.1f s (--connect-timeout)", bootstrap,
                        why, remainingMs(deadline) / 1000.0));
            }
            if (remainingMs(deadline) <= 0) break;
            try {
                Thread.sleep(Math.min(500, remainingMs(deadline)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new ServiceException("cannot reach Kafka at " + bootstrap + ": " + why
                + String.format(" (waited %.1f s; see --connect-timeout)", timeoutMs / 1000.0));
    }

    private static long remainingMs(long deadline) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private static String connect(Server s, InetAddress address, long timeoutMs) {
        try (Socket socket = new Socket()) {
            // at least a fifth of a second: a refusal must not read as no answer because the wait ran out
            socket.connect(new InetSocketAddress(address, s.port()), (int) Math.max(200, Math.min(timeoutMs, 5_000)));
            return null;
        } catch (ConnectException e) {
            return s + " refused the connection";
        } catch (SocketTimeoutException e) {
            return s + " did not answer";
        } catch (NoRouteToHostException e) {
            return s + " cannot be reached (no route to host)";
        } catch (IOException e) {
            return s + ": " + (e.getMessage() == null ? "connection failed" : e.getMessage());
        }
    }

    private static String describeCluster(String bootstrap, long timeoutMs, Map<String, Object> clientConfig) {
        Map<String, Object> c = new HashMap<>(clientConfig);
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        int t = (int) Math.max(1_000, Math.min(timeoutMs, Integer.MAX_VALUE));
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, t);
        c.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(t, 10_000));
        try (Admin admin = Admin.create(c)) {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs(t)).nodes().get();
            return null;
        } catch (ExecutionException e) {
            return String.format("a server at %s accepts connections but did not answer as a Kafka broker within %.1f s",
                    bootstrap, t / 1000.0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
