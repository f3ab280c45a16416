package io.swapstream.ingest;

import io.swapstream.schemas.SessionPartitioner;
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
 * What the decode stage last said of a session, read from the compacted {@code etw.sessions}
 * topic: only the one partition the session lives on (SessionPartitioner), committed records only.
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

    /** The latest record of {@code session}, or null when the decode stage has said nothing of it. */
    public TraceSession latest(String session) {
        List<PartitionInfo> partitions = consumer.partitionsFor(topic);
        if (partitions == null || partitions.isEmpty()) return null;
        TopicPartition tp = new TopicPartition(topic, SessionPartitioner.partition(session, partitions.size()));
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        long end = consumer.endOffsets(List.of(tp)).get(tp);
        TraceSession latest = null;
        while (consumer.position(tp) < end) {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                if (session.equals(r.key()) && r.value() != null) latest = values.deserialize(topic, r.value());
            }
        }
        return latest;
    }

    /** True when the session has ended: re-publishing it would only fill the dead-letter topic. */
    public boolean hasEnded(String session) {
        TraceSession s = latest(session);
        return s != null && (s.getComplete() || s.getEndReason() != null);
    }

    @Override
    public void close() {
        consumer.close();
    }
}
