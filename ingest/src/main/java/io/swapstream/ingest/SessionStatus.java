package io.swapstream.ingest;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Whether the decode stage has said a session ended, read from the compacted {@code etw.sessions}
 * topic, committed records only: the topic once, then what it gains.
 */
public final class SessionStatus implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    private final Deserializer<TraceSession> values;
    private final String topic;

    public SessionStatus(String bootstrapServers, String prefix, Map<String, Object> overrides) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-session-status");
        c.putAll(overrides);
        this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        this.topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.SESSIONS);
        Map<String, Object> serdeConfig = new HashMap<>(c);
        serdeConfig.put(SwapstreamConfig.TOPIC_PREFIX, prefix);
        this.values = RecordSerdeFactory.from(serdeConfig).serde(TraceSession.class, serdeConfig).deserializer();
    }

    /** The sessions the topic says ended, as of the records read so far. */
    private final java.util.Set<String> ended = new java.util.HashSet<>();
    private List<TopicPartition> partitions;

    /**
     * Reads what the topic gained since the last call: the whole topic once, then only what is new, so a check per file
     * costs the records written since, not the topic (ingesting many files read it whole for each).
     */
    private void catchUp() {
        if (partitions == null) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) return;
            partitions = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        }
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
        while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                TraceSession t = r.value() == null ? null : values.deserialize(topic, r.value());
                if (t != null && (t.getComplete() || t.getEndReason() != null)) ended.add(r.key());
                else ended.remove(r.key());
            }
        }
    }

    /** True when the session has ended: re-publishing it would only fill the dead-letter topic. */
    public boolean hasEnded(String session) {
        catchUp();
        return ended.contains(session);
    }

    @Override
    public void close() {
        consumer.close();
    }
}
