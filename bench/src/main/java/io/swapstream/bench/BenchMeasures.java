package io.swapstream.bench;

import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.EtlReader;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What {@code bench} measures beside the stages: CPU by thread, bytes by topic, Kafka's own ceiling for the same records. */
public final class BenchMeasures {
    private BenchMeasures() {}

    /** CPU seconds so far of the live threads, by name with its digits as N: the broker's request handlers together, say. */
    public static Map<String, Double> cpuByThreadGroup() {
        var mx = ManagementFactory.getThreadMXBean();
        Map<String, Double> out = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            long ns = mx.getThreadCpuTime(t.getId());
            if (ns > 0) out.merge(t.getName().replaceAll("[0-9a-f]{8}-[0-9a-f-]{27}", "ID").replaceAll("[0-9]+", "N"), ns / 1e9, Double::sum);
        }
        return out;
    }

    public static Map<String, Double> minus(Map<String, Double> after, Map<String, Double> before) {
        Map<String, Double> out = new HashMap<>();
        after.forEach((k, v) -> out.put(k, v - before.getOrDefault(k, 0.0)));
        return out;
    }

    /** A topic's bytes: in the brokers' logs (after compression, with Kafka's batch headers), and its records' values. */
    public record TopicBytes(long log, long values) {}

    /** The bytes of every topic of the run: the pipeline's and its stages' changelogs and repartition topics. */
    public static Map<String, TopicBytes> bytesByTopic(String bootstrap, String prefix) throws Exception {
        Map<String, TopicBytes> out = new HashMap<>();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<String> topics = admin.listTopics().names().get().stream()
                    .filter(t -> t.startsWith(prefix) || t.startsWith("bench-" + prefix)).toList();
            Map<String, Long> log = CompressionTrial.logBytes(admin, topics);
            for (String topic : topics) out.put(topic, new TopicBytes(log.getOrDefault(topic, 0L), topicSize(bootstrap, topic, null).bytes()));
        }
        return out;
    }

    /** CPU seconds so far of the live threads whose names hold {@code part}. */
    public static double threadCpu(String part) {
        var mx = ManagementFactory.getThreadMXBean();
        double s = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains(part)) s += Math.max(0, mx.getThreadCpuTime(t.getId())) / 1e9;
        }
        return s;
    }

    public static double secs(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /** Records and bytes (uncompressed values) of a topic, and the offsets they end at. */
    public record TopicSize(long records, long bytes, Map<TopicPartition, Long> end) {}

    /** A topic's records read back committed: from {@code from}, or all when it is null. */
    public static TopicSize topicSize(String bootstrap, String topic, Map<TopicPartition, Long> from) {
        Map<String, Object> c = consumerConfig(bootstrap);
        long records = 0;
        long bytes = 0;
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            if (from == null) consumer.seekToBeginning(parts);
            else parts.forEach(p -> consumer.seek(p, from.getOrDefault(p, 0L)));
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            while (parts.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    records++;
                    bytes += r.value() == null ? 0 : r.value().length; // a changelog's tombstones have none
                }
            }
            return new TopicSize(records, bytes, end);
        }
    }

    public static Map<String, Object> consumerConfig(String bootstrap) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        return c;
    }

    public record Ceiling(long records, long bytes, String compression, double produceSecs, double consumeSecs) {}

    public static double median(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * Kafka alone: the same number of records of the same total size, produced with {@code compression}
     * (the ingester's for raw buffers, the stages' for batches), 512 KiB batches, in transactions, and
     * consumed back committed. With {@code trace}, the records are its buffers as the ingester sends them
     * (they compress as the trace's do); without, half random and half zeros.
     */
    public static Ceiling ceiling(String bootstrap, long records, long bytes, String name, String compression, Path trace) throws Exception {
        String topic = "bench-ceiling-" + name + "-" + UUID.randomUUID().toString().substring(0, 6);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 4, (short) 1)
                    .configs(Map.of("max.message.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES))))).all().get();
        }
        Map<String, Object> p = CompressionTrial.producerConfig(bootstrap, topic, compression, SwapstreamConfig.MAX_MESSAGE_BYTES);
        long t0 = System.nanoTime();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            long[] sent = {0};
            java.util.function.Consumer<byte[]> send = value -> {
                producer.send(new ProducerRecord<>(topic, "s" + (sent[0] % 4), value));
                if (++sent[0] % 2000 == 0) {
                    producer.commitTransaction();
                    producer.beginTransaction();
                }
            };
            if (trace != null) {
                try (EtlReader r = EtlReader.open(trace).framesOnly()) {
                    while (r.next()) send.accept(BufferFiller.published(r.rawBytes(), r.rawLength(), r.header()));
                }
            } else {
                int size = (int) Math.max(1, bytes / Math.max(1, records));
                byte[] value = new byte[size];
                new java.util.Random(1).nextBytes(value);
                java.util.Arrays.fill(value, size / 2, size, (byte) 0);
                for (long i = 0; i < records; i++) send.accept(value);
            }
            producer.commitTransaction();
        }
        double produce = secs(t0);
        t0 = System.nanoTime();
        TopicSize read = topicSize(bootstrap, topic, null);
        double consume = secs(t0);
        return new Ceiling(read.records(), read.bytes(), compression, produce, consume);
    }

    public static String peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) return line.substring(6).trim();
            }
        } catch (Exception e) {
            // not Linux
        }
        return "unknown";
    }

    /** The fields two rows differ in, with both values. */
    static String differences(ThreadStats got, ThreadStats want) {
        List<String> out = new ArrayList<>();
        for (org.apache.avro.Schema.Field f : ThreadStats.getClassSchema().getFields()) {
            Object a = got.get(f.pos());
            Object b = want.get(f.pos());
            if (!java.util.Objects.equals(a, b)) out.add(f.name() + " " + a + " (offline " + b + ")");
        }
        return String.join("; ", out);
    }

    public static String mib(long[] bytes) {
        StringBuilder b = new StringBuilder();
        for (long x : bytes) b.append(b.length() == 0 ? "" : " + ").append(String.format("%.0f", x / 1048576.0));
        return b.toString();
    }

    static double quantile(List<Double> sorted, double q) {
        if (sorted.isEmpty()) return Double.NaN;
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }
}
