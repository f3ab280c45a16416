package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.stage.InputRecordReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The redo logs keep references to input records: reading them back gives the records, in the order
 * a restore asks (ascending, with gaps where other sessions' records sit), and again after a step
 * back; an offset past the topic's end is one clear error, not a hang.
 */
@ExtendWith(KafkaBroker.class)
class InputRecordReaderIT {
    @Test
    void referencesReadBackTheRecordsTheyNameAndAnEntryKeptWholeIsItself(KafkaBroker.Bootstrap kafka) throws Exception {
        String topic = "redo-read-" + UUID.randomUUID();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.servers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic, ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 20; i++) p.send(new ProducerRecord<>(topic, 1, null, value(i)));
            p.commitTransaction();
            p.beginTransaction();
            p.send(new ProducerRecord<>(topic, 1, null, value(99)));
            p.abortTransaction(); // an aborted record: read_committed never sees it
        }
        Map<String, Object> app = Map.of(StreamsConfig.APPLICATION_ID_CONFIG, "redo-read", StreamsConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.servers(), StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        try (InputRecordReader reader = new InputRecordReader(app, "redo-read-test")) {
            for (int i : new int[] {3, 4, 7, 12, 19, 5, 0}) {
                assertArrayEquals(value(i), reader.value(topic, InputRecordReader.reference(1, i)), "record " + i);
            }
            byte[] whole = "kept whole".getBytes(StandardCharsets.UTF_8);
            assertArrayEquals(whole, reader.value(topic, InputRecordReader.copy(whole)));
            for (long missing : new long[] {20, 1_000}) { // the aborted record; past the end
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> reader.value(topic, InputRecordReader.reference(1, missing)));
                assertTrue(e.getMessage().startsWith("cannot read back record " + missing + " of " + topic + "-1"), e.getMessage());
            }
        }
    }

    private static byte[] value(int i) {
        return ("record " + i).getBytes(StandardCharsets.UTF_8);
    }
}
