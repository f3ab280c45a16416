package io.swapstream.bench;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** The thread-stats topic read committed as it is written: final rows by key, and when each window's first came. */
final class FinalRows implements AutoCloseable {
    final Map<String, ThreadStats> finals = new ConcurrentHashMap<>();
    /** session/windowStart: wall ms of the window's first final row. */
    final Map<String, Long> firstFinalAt = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;

    FinalRows(String bootstrap, String prefix) {
        Map<String, Object> config = BenchMeasures.consumerConfig(bootstrap);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "fleet-bench-" + UUID.randomUUID());
        SingleObjectAvroSerde<ThreadStats> serde = new SingleObjectAvroSerde<>(ThreadStats.class);
        String topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.THREAD_STATS);
        thread = new Thread(() -> {
            try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!closed) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.value() == null) continue;
                        ThreadStats t = serde.deserialize(topic, r.value());
                        if (!t.getFinal$()) continue;
                        finals.put(r.key(), t);
                        if (r.key().split("/").length == 3) { // a window's row, not the whole session's
                            firstFinalAt.putIfAbsent(t.getSession() + "/" + t.getWindowStartNanos(), System.currentTimeMillis());
                        }
                    }
                }
            }
        }, "fleet-bench-rows");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.join();
    }
}
