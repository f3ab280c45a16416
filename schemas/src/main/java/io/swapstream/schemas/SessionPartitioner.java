package io.swapstream.schemas;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Partitions every topic by session: a key {@code session/...} goes where the bare key
 * {@code session} goes under Kafka's default partitioner, so all of a session's records share a
 * partition number across topics and the stages need no repartition hop.
 */
public final class SessionPartitioner<V> implements StreamPartitioner<String, V> {

    public static String session(String key) {
        // session ids hold ':' but never '/'
        int slash = key.indexOf('/');
        return slash < 0 ? key : key.substring(0, slash);
    }

    public static int partition(String key, int numPartitions) {
        byte[] b = session(key).getBytes(StandardCharsets.UTF_8);
        return Utils.toPositive(Utils.murmur2(b)) % numPartitions;
    }

    @Override
    public Optional<Set<Integer>> partitions(String topic, String key, V value, int numPartitions) {
        return Optional.of(Set.of(partition(key, numPartitions)));
    }
}
