package io.swapstream.aggregate.streams;

import io.swapstream.decode.streams.HangingTransactions;
import io.swapstream.decode.streams.InputRecordReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;

/** A task's partition of {@code etw.thread-stats}, read back with the task's reader, settled with an admin client of its own. */
final class ThreadStatsPartition implements FinalRowOutbox.OutputLog {
    /** How long a transaction its coordinator is ending may keep the partition open before the task gives up (and its thread is replaced). */
    static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);

    private final InputRecordReader reader;
    private final TopicPartition tp;
    private final Map<String, Object> appConfigs;
    private final String clientId;
    private int partitions = -1;

    ThreadStatsPartition(InputRecordReader reader, String topic, int partition, Map<String, Object> appConfigs, String clientId) {
        this.reader = reader;
        this.tp = new TopicPartition(topic, partition);
        this.appConfigs = appConfigs;
        this.clientId = clientId;
    }

    @Override
    public List<String> settle() {
        // once per task start: the client is not kept for the task's life
        try (Admin admin = Admin.create(new StreamsConfig(appConfigs).getAdminConfigs(clientId))) {
            return HangingTransactions.settle(admin, tp, SETTLE_TIMEOUT).stream().map(Object::toString).toList();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while settling " + tp, e);
        } catch (Exception e) {
            // a Kafka error, for the stage's thread replacement: the next thread starts the task again
            throw new KafkaException("could not see " + tp + " free of open transactions: " + e.getMessage(), e);
        }
    }

    @Override
    public long end() {
        return reader.endOffset(tp);
    }

    @Override
    public void scan(long from, long until, BiConsumer<String, byte[]> each) {
        try {
            // retention may have taken the records before: the scan starts at what is left
            reader.scan(tp, Math.max(from, reader.beginningOffset(tp)), until, r -> each.accept(r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8), r.value()));
        } catch (IllegalStateException e) {
            throw new KafkaException("could not read back " + tp + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String topic() {
        return tp.topic();
    }

    @Override
    public int partition() {
        return tp.partition();
    }

    @Override
    public int partitions() {
        if (partitions < 0) partitions = reader.partitionCount(tp.topic());
        return partitions;
    }

}
