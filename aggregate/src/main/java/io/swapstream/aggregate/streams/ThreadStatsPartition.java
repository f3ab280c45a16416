package io.swapstream.aggregate.streams;

import io.swapstream.decode.streams.InputRecordReader;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/** A task's partition of {@code etw.thread-stats}, read back with the task's reader. */
final class ThreadStatsPartition implements FinalRowOutbox.OutputLog {
    private final InputRecordReader reader;
    private final TopicPartition tp;
    private int partitions = -1;

    ThreadStatsPartition(InputRecordReader reader, String topic, int partition) {
        this.reader = reader;
        this.tp = new TopicPartition(topic, partition);
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
