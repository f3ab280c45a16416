package io.swapstream.ingest;

import io.swapstream.schemas.SwapstreamConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Creates the pipeline's topics with the partition count and sizes they need (DESIGN.md "Topics"). */
public final class TopicSetup {
    private TopicSetup() {}

    public static void ensure(Admin admin, String prefix, int partitions, short replication)
            throws InterruptedException, ExecutionException {
        String big = String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES);
        Map<String, Map<String, String>> topics = Map.of(
                SwapstreamConfig.RAW_BUFFERS, Map.of("max.message.bytes", big),
                SwapstreamConfig.SESSIONS, Map.of("cleanup.policy", "compact"),
                SwapstreamConfig.CONTEXT_SWITCHES, Map.of(),
                SwapstreamConfig.THREADS, Map.of("cleanup.policy", "compact"),
                SwapstreamConfig.THREAD_STATS, Map.of("cleanup.policy", "compact"),
                SwapstreamConfig.DEAD_LETTERS, Map.of("max.message.bytes", big));
        Set<String> existing = admin.listTopics().names().get();
        List<NewTopic> create = new ArrayList<>();
        topics.forEach((suffix, config) -> {
            String name = SwapstreamConfig.topic(prefix, suffix);
            if (!existing.contains(name)) create.add(new NewTopic(name, partitions, replication).configs(config));
        });
        try {
            admin.createTopics(create).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) throw e;
        }
        awaitLeaders(admin, topics.keySet().stream().map(t -> SwapstreamConfig.topic(prefix, t)).toList());
    }

    /**
     * Waits until every partition has a leader. A producer that writes to a partition still being
     * created can have its first batch refused while later ones are taken, and then fails with an
     * out-of-order sequence: seen here on a fresh in-JVM broker.
     */
    static void awaitLeaders(Admin admin, List<String> names) throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            boolean ready;
            try {
                ready = admin.describeTopics(names).allTopicNames().get().values().stream()
                        .allMatch(d -> d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()));
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
                ready = false;
            }
            if (ready) return;
            if (System.nanoTime() > deadline) throw new IllegalStateException("topics " + names + " have no leaders after 60 s");
            Thread.sleep(50);
        }
    }
}
