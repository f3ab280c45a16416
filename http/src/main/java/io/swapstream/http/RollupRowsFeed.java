package io.swapstream.http;

import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds {@link RollupMetrics} the roll-up rows as they are committed: a read_committed consumer of
 * {@code etw.process-stats} and {@code etw.host-stats} in a group of its own, so that each row counts once
 * across the stage's instances (the group splits the partitions; a name's rows share one) and a
 * transaction the stage aborts counts nothing. A new group starts at the topics' beginning; a restarted
 * instance goes on from the group's last commit, its counters from zero.
 */
public final class RollupRowsFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RollupRowsFeed.class);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final RollupSettings settings;
    private final RollupMetrics metrics;
    private final Thread thread;
    private volatile boolean closed;
    /** Rows counted, for tests and the progress line. */
    private volatile long rows;

    /**
     * @param clientConfig the stage's client settings (bootstrap servers, security); {@code groupId} is this feed's own group
     */
    public RollupRowsFeed(Map<String, Object> clientConfig, String groupId, RollupSettings settings, RollupMetrics metrics) {
        Map<String, Object> c = new HashMap<>(clientConfig);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId);
        this.consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.settings = settings;
        this.metrics = metrics;
        this.thread = new Thread(this::run, "swapstream-rollup-metrics");
        thread.setDaemon(true);
    }

    public RollupRowsFeed start() {
        thread.start();
        return this;
    }

    public long rows() {
        return rows;
    }

    private void run() {
        String processes = settings.processes().name();
        String hosts = settings.hosts().name();
        Deserializer<ProcessStats> p = settings.processes().valueSerde().deserializer();
        Deserializer<HostStats> h = settings.hosts().valueSerde().deserializer();
        try {
            consumer.subscribe(List.of(processes, hosts));
            while (!closed) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.value() == null) continue;
                    try {
                        if (r.topic().equals(processes)) metrics.take(p.deserialize(r.topic(), r.headers(), r.value()));
                        else metrics.take(h.deserialize(r.topic(), r.headers(), r.value()));
                        rows++;
                    } catch (RuntimeException e) {
                        LOG.warn("{} partition {} offset {}: not a roll-up row, not counted: {}", r.topic(), r.partition(), r.offset(), e.getMessage());
                    }
                }
            }
        } catch (WakeupException e) {
            if (!closed) throw e;
        } catch (RuntimeException e) {
            LOG.error("the fleet metrics stopped taking roll-up rows: {}", e.toString());
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        if (!thread.isAlive() && thread.getState() == Thread.State.NEW) {
            consumer.close(Duration.ZERO);
            return;
        }
        consumer.wakeup();
        thread.join(10_000);
    }
}
