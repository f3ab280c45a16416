package io.swapstream.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The bytes a topic takes on the brokers' disks, and what a producer's compression would change for
 * records that are already on a topic: the same values produced again with each codec, timed, and
 * their logs measured. For deciding {@code compression.type} on these machines with these records.
 */
public final class CompressionTrial {
    private CompressionTrial() {}

    static final List<String> CODECS = List.of("none", "lz4", "zstd");

    /** One codec's figures: its log's bytes, the time to produce the records in transactions and to consume them back. */
    public record Result(String codec, long logBytes, double produceSecs, double consumeSecs) {}

    /** The bytes each topic's partitions take in the brokers' log directories. */
    static Map<String, Long> logBytes(Admin admin, Collection<String> topics) throws Exception {
        List<Integer> brokers = admin.describeCluster().nodes().get().stream().map(Node::id).toList();
        Map<String, Long> out = new HashMap<>();
        admin.describeLogDirs(brokers).allDescriptions().get().values().forEach(dirs -> dirs.values().forEach(d ->
                d.replicaInfos().forEach((tp, info) -> {
                    if (topics.contains(tp.topic())) out.merge(tp.topic(), info.size(), Long::sum);
                })));
        return out;
    }

    /** The values of {@code topic}'s records whose key starts with {@code keyPrefix}, committed ones. */
    public static List<byte[]> values(Map<String, Object> consumerConfig, String topic, String keyPrefix) {
        List<byte[]> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(consumerConfig, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(p -> c.position(p) < end.get(p))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.key() != null && r.key().startsWith(keyPrefix) && r.value() != null) out.add(r.value());
                }
            }
        }
        return out;
    }

    /** A transactional producer as the stages configure theirs (512 KiB batches, 5 ms linger), with {@code codec}. */
    static Map<String, Object> producerConfig(String bootstrap, String transactionalId, String codec, int maxMessageBytes) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxMessageBytes);
        return p;
    }

    /** {@code values} produced to a new topic with each codec (512 KiB batches, a transaction per 2,000), then consumed back. */
    public static List<Result> run(String bootstrap, Map<String, Object> consumerConfig, List<byte[]> values, int maxMessageBytes) throws Exception {
        List<Result> out = new ArrayList<>();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            for (String codec : CODECS) {
                String topic = "bench-codec-" + codec + "-" + UUID.randomUUID().toString().substring(0, 6);
                admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1)
                        .configs(Map.of("max.message.bytes", String.valueOf(maxMessageBytes))))).all().get();
                Map<String, Object> p = producerConfig(bootstrap, topic, codec, maxMessageBytes);
                long t0 = System.nanoTime();
                try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
                    producer.initTransactions();
                    producer.beginTransaction();
                    for (int i = 0; i < values.size(); i++) {
                        producer.send(new ProducerRecord<>(topic, "s" + (i % 4), values.get(i)));
                        if ((i + 1) % 2000 == 0) {
                            producer.commitTransaction();
                            producer.beginTransaction();
                        }
                    }
                    producer.commitTransaction();
                }
                double produce = (System.nanoTime() - t0) / 1e9;
                t0 = System.nanoTime();
                int read = values(consumerConfig, topic, "s").size();
                // the coordinator writes the commit markers after commitTransaction returns, so the last stable offset
                // a read_committed consumer stops at may lag them a moment: read again until all are there
                for (long until = System.nanoTime() + 30_000_000_000L; read < values.size() && System.nanoTime() < until; ) {
                    Thread.sleep(100);
                    read = values(consumerConfig, topic, "s").size();
                }
                double consume = (System.nanoTime() - t0) / 1e9;
                if (read != values.size()) throw new IllegalStateException(topic + ": " + read + " of " + values.size() + " records read back");
                out.add(new Result(codec, logBytes(admin, List.of(topic)).getOrDefault(topic, 0L), produce, consume));
                admin.deleteTopics(List.of(topic)).all().get();
            }
        }
        return out;
    }
}
