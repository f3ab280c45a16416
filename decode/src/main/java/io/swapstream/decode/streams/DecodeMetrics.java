package io.swapstream.decode.streams;

import static io.swapstream.stage.StageSensors.*;

import io.swapstream.stage.StageSensors;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/** What one decode task counts, as sensors of its own (see {@link StageSensors}). */
final class DecodeMetrics {
    private final StageSensors sensors;
    final Sensor recordsIn;
    final Sensor buffersIn;
    final Sensor switchesOut;
    final Sensor switchesOutOfOrder;
    final Sensor sessionsEnded;
    final Sensor sessionsForgotten;
    final Sensor buffersLost;
    final Sensor eventsLost;
    final Sensor sessionsOpen;
    final Sensor mergeQueued;
    final Sensor checkpointBytes;
    final Sensor eventLag;

    DecodeMetrics(ProcessorContext<?, ?> context) {
        sensors = new StageSensors(context, "decode");
        recordsIn = sensors.counter(RECORDS_IN);
        buffersIn = sensors.counter(BUFFERS_IN);
        switchesOut = sensors.counter(SWITCHES_OUT);
        switchesOutOfOrder = sensors.counter(SWITCHES_OUT_OF_ORDER);
        sessionsEnded = sensors.counter(SESSIONS_ENDED);
        sessionsForgotten = sensors.counter(SESSIONS_FORGOTTEN);
        buffersLost = sensors.counter(BUFFERS_LOST);
        eventsLost = sensors.counter(EVENTS_LOST);
        sessionsOpen = sensors.gauge(SESSIONS_OPEN);
        mergeQueued = sensors.gauge(MERGE_QUEUED_ITEMS);
        checkpointBytes = sensors.gauge(DECODE_CHECKPOINT_BYTES);
        eventLag = sensors.gauge(EVENT_LAG_NANOS);
        for (String reason : DEAD_LETTER_REASONS) sensors.registerReason(DEAD_LETTERS, reason);
    }

    void deadLetter(String kind) {
        sensors.countByReason(DEAD_LETTERS, kind, 1);
    }

    /** The ingester sent {@code n} records of an ending session to the dead letters: they count here, where the others do. */
    void deadLettersAtIngest(long n) {
        sensors.countByReason(DEAD_LETTERS, "at-ingest", n);
    }

    void close() {
        sensors.close();
    }
}
