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
    }
}
