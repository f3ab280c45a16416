package io.swapstream.stage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A redo log's entries (references to the input topic, or copies) and the reader that turns them back into records, over an
 * input topic in memory: what it reads, and what it refuses with a reason a restore can report.
 */
@Timeout(60) // a guard only: nothing here waits, and the topic below refuses to be polled in vain
class InputRecordReaderTest {
    static final String TOPIC = "etw.raw-buffers";

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static Map<String, Object> appConfigs() {
        Map<String, Object> c = new HashMap<>();
        c.put(StreamsConfig.APPLICATION_ID_CONFIG, "swapstream-decode");
        c.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
        c.put("security.protocol", "SASL_SSL");
        return c;
    }

    /** A reader over {@code topic}, every consumer it opens recorded in {@code opened}. */
    static InputRecordReader reader(Topic topic, List<Map<String, Object>> opened) {
        return new InputRecordReader(appConfigs(), "swapstream-decode-0_3-redo", c -> {
            opened.add(c);
            return topic.consumer();
        });
    }

    @Test
    void entriesAreAReferenceOfThirteenBytesOrATaggedCopy() {
        byte[] ref = InputRecordReader.reference(3, 1L << 40 | 7);
        assertEquals(13, ref.length);
        ByteBuffer b = ByteBuffer.wrap(ref);
        assertEquals('R', b.get());
        assertEquals(3, b.getInt());
        assertEquals(1L << 40 | 7, b.getLong());

        byte[] copy = InputRecordReader.copy(bytes("buffer"));
        assertEquals('B', copy[0]);
        assertEquals("buffer", text(java.util.Arrays.copyOfRange(copy, 1, copy.length)));

        // the entry of the record being processed is its partition and offset
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        context.setRecordMetadata(TOPIC, 5, 4242);
        assertArrayEquals(InputRecordReader.reference(5, 4242), InputRecordReader.reference(context));
    }

    @Test
    void aReferenceOutsideAProcessedRecordIsRefused() {
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> InputRecordReader.reference(context));
        assertTrue(e.getMessage().contains("no record is being processed"), e.getMessage());
    }

    @Test
    void copiesAndEarlierEntriesAreReadWithoutAConsumer() {
        List<Map<String, Object>> opened = new ArrayList<>();
        try (InputRecordReader reader = reader(new Topic(), opened)) {
            assertEquals("a switch batch", text(reader.value(TOPIC, InputRecordReader.copy(bytes("a switch batch")))));
            assertEquals(0, reader.value(TOPIC, InputRecordReader.copy(new byte[0])).length, "an empty record, copied");
            // an entry written before references existed is the record itself: neither tag byte begins it
            byte[] old = {0x57, 0x4d, 0x49, 0x00, 1, 2, 3};
            assertArrayEquals(old, reader.value(TOPIC, old));
            assertEquals(0, reader.value(TOPIC, new byte[0]).length);
            // 'R' but not a reference's length: an earlier entry too
            byte[] notAReference = {'R', 1, 2};
            assertArrayEquals(notAReference, reader.value(TOPIC, notAReference));
        }
        assertTrue(opened.isEmpty(), "no consumer for entries that hold their record");
    }

    @Test
    void itsConsumerReadsCommittedRecordsWithTheStreamsClientsConnection() {
        Topic topic = new Topic().put(0, 0, "r0");
        List<Map<String, Object>> opened = new ArrayList<>();
        try (InputRecordReader reader = reader(topic, opened)) {
            assertEquals("r0", text(reader.value(TOPIC, InputRecordReader.reference(0, 0))));
        }
        assertEquals(1, opened.size());
        Map<String, Object> c = opened.get(0);
        assertEquals("read_committed", c.get(ConsumerConfig.ISOLATION_LEVEL_CONFIG));
        assertEquals(false, c.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG));
        assertEquals(ByteArrayDeserializer.class, c.get(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG));
        assertEquals(ByteArrayDeserializer.class, c.get(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG));
        assertEquals("swapstream-decode-0_3-redo", c.get(ConsumerConfig.CLIENT_ID_CONFIG));
        assertEquals("SASL_SSL", c.get("security.protocol"), "the Streams client's connection settings");
        assertTrue(String.valueOf(c.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)).contains("127.0.0.1:9"), c.toString());
        assertNull(c.get(ConsumerConfig.GROUP_ID_CONFIG), "assigned, in no group: nothing commits offsets");
        assertTrue(topic.closed, "close closes the consumer");
    }

    /** A replay asks in offset order: one seek, then the records as polled. */
    @Test
    void aReplayReadsForwardFromOneSeek() {
        Topic topic = new Topic();
        for (long o = 10; o < 17; o++) topic.put(3, o, "p3-" + o);
        topic.put(3, 17, null); // a tombstone: an empty record
        List<Map<String, Object>> opened = new ArrayList<>();
        try (InputRecordReader reader = reader(topic, opened)) {
            for (long o = 10; o < 15; o++) assertEquals("p3-" + o, text(reader.value(TOPIC, InputRecordReader.reference(3, o))));
            // the same record again, and one further on within what was polled
            assertEquals("p3-14", text(reader.value(TOPIC, InputRecordReader.reference(3, 14))));
            assertEquals("p3-16", text(reader.value(TOPIC, InputRecordReader.reference(3, 16))));
            assertEquals(0, reader.value(TOPIC, InputRecordReader.reference(3, 17)).length);
            assertEquals(1, topic.seeks, "offsets in order, all in one poll: one seek");
            assertEquals(1, topic.polls);
        }
        assertEquals(1, opened.size(), "one consumer for the whole replay");
    }

    /** A poll gives a few records at a time: the replay goes on across polls, and a gap in the offsets is no record skipped. */
    @Test
    void aReplayGoesOnAcrossPolls() {
        Topic topic = new Topic().perPoll(2);
        for (long o = 0; o < 9; o++) if (o != 4) topic.put(0, o, "r" + o);
        try (InputRecordReader reader = reader(topic, new ArrayList<>())) {
            for (long o = 0; o < 9; o++) {
                if (o != 4) assertEquals("r" + o, text(reader.value(TOPIC, InputRecordReader.reference(0, o))));
            }
            assertTrue(topic.polls >= 4, "8 records, 2 a poll: " + topic.polls);
        }
    }

    /** Sessions of one partition restore one after another: the next one's records may lie before the last one read. */
    @Test
    void aRecordBeforeTheLastReadOrOnAnotherPartitionIsSoughtAgain() {
        Topic topic = new Topic();
        for (long o = 0; o < 6; o++) topic.put(1, o, "p1-" + o);
        for (long o = 100; o < 103; o++) topic.put(2, o, "p2-" + o);
        try (InputRecordReader reader = reader(topic, new ArrayList<>())) {
            assertEquals("p1-4", text(reader.value(TOPIC, InputRecordReader.reference(1, 4))));
            assertEquals("p1-1", text(reader.value(TOPIC, InputRecordReader.reference(1, 1))), "back");
            assertEquals("p2-101", text(reader.value(TOPIC, InputRecordReader.reference(2, 101))), "another partition");
            assertEquals(Set.of(new TopicPartition(TOPIC, 2)), topic.assignment());
            assertEquals("p1-5", text(reader.value(TOPIC, InputRecordReader.reference(1, 5))), "and back to the first");
            assertEquals(4, topic.seeks);
        }
    }

    @Test
    void aRecordRetentionDeletedIsRefusedWithItsReason() {
        Topic topic = new Topic().put(0, 20, "r20").startAt(0, 20);
        try (InputRecordReader reader = reader(topic, new ArrayList<>())) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> reader.value(TOPIC, InputRecordReader.reference(0, 5)));
            assertTrue(e.getMessage().startsWith("cannot read back record 5 of " + TOPIC + "-0 to restore a session: the topic has no such offset"),
                    e.getMessage());
            // the reader goes on: a record the topic has is read
            assertEquals("r20", text(reader.value(TOPIC, InputRecordReader.reference(0, 20))));
        }
    }

    @Test
    void anOffsetTheTopicSkipsIsRefusedNotReplacedByTheNextRecord() {
        Topic topic = new Topic().put(0, 4, "r4").put(0, 6, "r6");
        try (InputRecordReader reader = reader(topic, new ArrayList<>())) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> reader.value(TOPIC, InputRecordReader.reference(0, 5)));
            assertTrue(e.getMessage().contains("record 5 of " + TOPIC + "-0") && e.getMessage().contains("the topic has no record there"),
                    e.getMessage());
            assertEquals("r6", text(reader.value(TOPIC, InputRecordReader.reference(0, 6))));
        }
    }

    /** read_committed passes an aborted record (or a transaction's marker) with nothing to show: the position moves past it. */
    @Test
    void aRecordThatIsNotCommittedIsRefused() {
        Topic topic = new Topic().put(0, 4, "r4").abort(0, 5);
        try (InputRecordReader reader = reader(topic, new ArrayList<>())) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> reader.value(TOPIC, InputRecordReader.reference(0, 5)));
            assertTrue(e.getMessage().contains("record 5 of " + TOPIC + "-0") && e.getMessage().endsWith("the record there is not a committed one"),
                    e.getMessage());
        }
    }

    @Test
    void aReaderClosedOpensAnotherConsumerWhenAskedAgain() {
        Topic topic = new Topic().put(0, 0, "r0").put(0, 1, "r1");
        List<Map<String, Object>> opened = new ArrayList<>();
        InputRecordReader reader = reader(topic, opened);
        assertEquals("r0", text(reader.value(TOPIC, InputRecordReader.reference(0, 0))));
        reader.close();
        assertTrue(topic.closed);
        reader.close(); // twice: nothing to close
        assertEquals("r1", text(reader.value(TOPIC, InputRecordReader.reference(0, 1))));
        assertEquals(2, opened.size());
        assertFalse(topic.closed);
        reader.close();
    }

    /**
     * An input topic in memory, read as a consumer reads it: from the position a seek sets, up to {@link #perPoll} records a poll, records
     * before the log's start an {@link OffsetOutOfRangeException}, aborted ones passed over unseen. A poll that could give
     * nothing and move nowhere fails the test rather than let the reader wait for its timeout.
     */
    static final class Topic {
        final Map<Integer, TreeMap<Long, byte[]>> partitions = new HashMap<>();
        final Map<Integer, Long> logStart = new HashMap<>();
        final Map<Integer, Set<Long>> aborted = new HashMap<>();
        int seeks;
        int polls;
        private int perPoll = 500;
        boolean closed;
        private Consumer consumer;

        Topic put(int partition, long offset, String value) {
            partitions.computeIfAbsent(partition, p -> new TreeMap<>()).put(offset, value == null ? null : bytes(value));
            return this;
        }

        Topic perPoll(int records) {
            perPoll = records;
            return this;
        }

        Topic startAt(int partition, long offset) {
            logStart.put(partition, offset);
            return this;
        }

        Topic abort(int partition, long offset) {
            aborted.computeIfAbsent(partition, p -> new HashSet<>()).add(offset);
            return this;
        }

        Set<TopicPartition> assignment() {
            return consumer.assignment();
        }

        Consumer consumer() {
            closed = false;
            consumer = new Consumer();
            return consumer;
        }

        final class Consumer extends MockConsumer<byte[], byte[]> {
            private final Map<TopicPartition, Long> positions = new HashMap<>();

            Consumer() {
                super("none");
            }

            @Override
            public synchronized void assign(Collection<TopicPartition> partitions) {
                positions.keySet().retainAll(partitions);
                super.assign(partitions);
            }

            @Override
            public synchronized void seek(TopicPartition tp, long offset) {
                if (!assignment().contains(tp)) throw new IllegalStateException("not assigned: " + tp);
                seeks++;
                positions.put(tp, offset);
            }

            @Override
            public synchronized long position(TopicPartition tp) {
                return positions.get(tp);
            }

            @Override
            public synchronized ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
                polls++;
                Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> out = new HashMap<>();
                for (TopicPartition tp : assignment()) {
                    long at = positions.get(tp);
                    if (at < logStart.getOrDefault(tp.partition(), 0L)) throw new OffsetOutOfRangeException(Map.of(tp, at));
                    long from = at;
                    List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                    for (var e : partitions.getOrDefault(tp.partition(), new TreeMap<>()).tailMap(at, true).entrySet()) {
                        if (got.size() == perPoll) break;
                        at = e.getKey() + 1;
                        if (aborted.getOrDefault(tp.partition(), Set.of()).contains(e.getKey())) continue;
                        got.add(new ConsumerRecord<>(tp.topic(), tp.partition(), e.getKey(), null, e.getValue()));
                    }
                    for (long a : aborted.getOrDefault(tp.partition(), Set.of())) if (got.isEmpty() && a >= at) at = a + 1;
                    if (got.isEmpty() && at == from) throw new AssertionError("polled " + tp + " at " + at + ", where nothing will come");
                    positions.put(tp, at);
                    if (!got.isEmpty()) out.put(tp, got);
                }
                return new ConsumerRecords<>(out, Map.of());
            }

            @Override
            public synchronized void close(Duration timeout) {
                closed = true;
                super.close(timeout);
            }
        }
    }
}
