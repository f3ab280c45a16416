package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.internals.TaskExecutor;
import org.apache.kafka.streams.processor.internals.TaskManager;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The commands' logging (simplelogger.properties): Kafka Streams' ERROR lines for exceptions it rethrows, which the stage
 * reports in one line or repairs (a TaskCorruptedException after kill -9), are off; Kafka's other errors stay.
 */
class LoggingConfigTest {
    @Test
    void kafkaStreamsLinesForRethrownExceptionsAreOffAndOtherErrorsStay() {
        // the stream thread's fatal error reaches the stage's handler too, a refused right among them (docs/operations.md "Security")
        for (Class<?> c : new Class<?>[] {KafkaStreams.class, TaskManager.class, TaskExecutor.class, StreamThread.class}) {
            assertFalse(LoggerFactory.getLogger(c).isErrorEnabled(), c.getName());
        }
        assertTrue(LoggerFactory.getLogger("org.apache.kafka.clients.producer.KafkaProducer").isErrorEnabled());
        assertFalse(LoggerFactory.getLogger("org.apache.kafka.clients.producer.KafkaProducer").isWarnEnabled());
        assertTrue(LoggerFactory.getLogger("io.swapstream.aggregate.rollup.streams.RollupProcessor").isWarnEnabled());
    }
}
