package io.swapstream.stage;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * A stage's redo log entry, and the reader that turns one back into the record it stands for.
 * A redo log keeps what a restarted task must take again since the last checkpoint or flush; an
 * input record it took in order is kept as a reference (partition and offset of the stage's own
 * input topic, which holds it anyway), not a copy: a copy is the whole input written a second time,
 * to RocksDB and to the changelog. A record taken out of order (held apart first) is kept whole.
 * References are read back only when a task restores a session, with a consumer of its own
 * (read_committed, the Streams client's connection settings).
 */
public final class InputRecordReader implements AutoCloseable {
    private static final byte REFERENCE = 'R';
    private static final byte COPY = 'B';
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, Object> appConfigs;
    private final String clientId;
    /** Makes the reader's consumer from its configuration: a {@link KafkaConsumer} on a stage. */
    private final Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers;
    private Consumer<byte[], byte[]> consumer;
    private TopicPartition assigned;
    private List<ConsumerRecord<byte[], byte[]>> fetched = List.of();
    private int next;

    /** @param appConfigs a Streams client's configuration: its connection settings are the reader's */
    public InputRecordReader(Map<String, Object> appConfigs, String clientId) {
        this(appConfigs, clientId, KafkaConsumer::new);
    }

    /** Over consumers made by {@code consumers} (a test's, in memory). */
    InputRecordReader(Map<String, Object> appConfigs, String clientId, Function<Map<String, Object>, Consumer<byte[], byte[]>> consumers) {
        this.appConfigs = appConfigs;
        this.clientId = clientId;
        this.consumers = consumers;
    }

    /** A reader for a task's redo log, named {@code name}. */
    public static InputRecordReader of(ProcessorContext<?, ?> context, String name) {
        return new InputRecordReader(context.appConfigs(), context.applicationId() + "-" + context.taskId() + "-" + name);
    }

    /** The entry for the record being processed, taken in order: its partition and offset. */
    public static byte[] reference(ProcessorContext<?, ?> context) {
        RecordMetadata m = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record is being processed"));
        return reference(m.partition(), m.offset());
    }

    public static byte[] reference(int partition, long offset) {
        return ByteBuffer.allocate(13).put(REFERENCE).putInt(partition).putLong(offset).array();
    }

    /** The entry for a record kept whole. */
    public static byte[] copy(byte[] value) {
        byte[] out = new byte[value.length + 1];
        out[0] = COPY;
        System.arraycopy(value, 0, out, 1, value.length);
        return out;
    }

    /**
     * The record an entry stands for: read back from {@code topic} when it is a reference. An entry
     * written before references existed is the record itself (raw buffers and switch batches begin
     * with neither tag byte).
     */
    public byte[] value(String topic, byte[] entry) {
        if (entry.length == 13 && entry[0] == REFERENCE) {
            ByteBuffer b = ByteBuffer.wrap(entry, 1, 12);
            return read(new TopicPartition(topic, b.getInt()), b.getLong());
        }
        if (entry.length > 0 && entry[0] == COPY) return Arrays.copyOfRange(entry, 1, entry.length);
        return entry;
    }

    /** The value at {@code offset}; reads forward from the last one, as a replay asks in offset order. */
    private byte[] read(TopicPartition tp, long offset) {
        open();
        while (next < fetched.size() && fetched.get(next).offset() < offset) next++;
        if (!tp.equals(assigned) || next >= fetched.size() || fetched.get(next).offset() > offset) {
            if (!tp.equals(assigned)) consumer.assign(List.of(tp));
            assigned = tp;
            consumer.seek(tp, offset);
            fetched = List.of();
            next = 0;
        }
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        while (true) {
            while (next < fetched.size()) {
                ConsumerRecord<byte[], byte[]> r = fetched.get(next);
                if (r.offset() == offset) return r.value() == null ? new byte[0] : r.value();
                if (r.offset() > offset) throw missing(tp, offset, "the topic has no record there (deleted by retention?)");
                next++;
            }
            if (System.nanoTime() > deadline) throw missing(tp, offset, "no answer within " + READ_TIMEOUT.toSeconds() + " s");
            try {
                fetched = consumer.poll(Duration.ofMillis(500)).records(tp);
            } catch (InvalidOffsetException e) {
                throw missing(tp, offset, "the topic has no such offset (" + e.getMessage() + ")");
            }
            next = 0;
            if (fetched.isEmpty() && consumer.position(tp) > offset) {
                throw missing(tp, offset, "the record there is not a committed one");
            }
        }
    }

    private void open() {
        if (consumer != null) return;
        Map<String, Object> c = new StreamsConfig(appConfigs).getRestoreConsumerConfigs(clientId);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumer = consumers.apply(c);
    }

    private static IllegalStateException missing(TopicPartition tp, long offset, String why) {
        return new IllegalStateException("cannot read back record " + offset + " of " + tp + " to restore a session: " + why);
    }

    @Override
    public void close() {
        if (consumer != null) consumer.close(Duration.ofSeconds(5));
        consumer = null;
        assigned = null;
        fetched = List.of();
    }
}
