package io.swapstream.stage;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.processor.api.ProcessingContext;

/**
 * Taking one input record: what it throws that is the record's own doing is returned, for the processor to
 * skip the record with its reason; Kafka's own failures (the broker's, the stores', the task's) go on up and
 * stop the task. A task that stopped on a record would meet it again at every restart.
 */
public final class RecordFailures {
    private RecordFailures() {}

    /** Runs {@code take}; returns what the record made it throw, or null. */
    public static RuntimeException of(Runnable take) {
        try {
            take.run();
            return null;
        } catch (SerializationException e) {
            return e; // the record's own bytes
        } catch (KafkaException e) {
            throw e;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** The record being processed, as "topic-partition offset N", for a line about it. */
    public static String where(ProcessingContext context) {
        return context.recordMetadata().map(m -> m.topic() + "-" + m.partition() + " offset " + m.offset()).orElse("?");
    }
}
