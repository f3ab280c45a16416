package io.swapstream.ingest;

import io.swapstream.schemas.state.StateFormat;
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
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * How far a session has been published: the value of an {@code etw.ingest-positions} record, written in
 * the transaction that publishes the buffers it counts, so that both commit or neither does.
 */
public final class IngestPosition {
    static final StateFormat FORMAT = new StateFormat("ingest position", 4);

    String path;
    long nextIndex;
    long offset;
    boolean ended;

    public String path() { return path; }
    public long nextIndex() { return nextIndex; }
    public long offset() { return offset; }
    public boolean ended() { return ended; }

    byte[] encode() {
        return FORMAT.write(o -> o.string(path).writeLong(nextIndex).writeLong(offset).writeBoolean(ended));
    }

    public static IngestPosition decode(byte[] b) {
        return FORMAT.read(b, in -> {
            IngestPosition p = new IngestPosition();
            p.path = in.string();
            p.nextIndex = in.readLong();
            p.offset = in.readLong();
            p.ended = in.readBoolean();
            return p;
        });
    }

    /** The committed positions of {@code topic}: the latest record of every session, committed transactions only. */
    static Map<String, IngestPosition> readCommitted(String bootstrap, String topic, Map<String, Object> overrides) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-ingest-positions");
        c.putAll(overrides);
        Map<String, IngestPosition> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) return out;
            List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            while (parts.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value() == null) out.remove(r.key());
                    else out.put(r.key(), decode(r.value()));
                }
            }
        }
        return out;
    }
}
