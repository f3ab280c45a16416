package io.swapstream.aggregate.streams;

import static io.swapstream.stage.StageSensors.*;

import io.swapstream.stage.StageSensors;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/** What one aggregate task counts, as sensors of its own (see {@link StageSensors}). */
final class AggregateMetrics {
    private final StageSensors sensors;
    final Sensor switchesIn;
    final Sensor statsOut;
    final Sensor windowsClosed;
    final Sensor duplicateBatches;
    final Sensor sessionsEnded;
    final Sensor sessionsForgotten;
    final Sensor sessionsOpen;
    final Sensor latestSwitch;

    AggregateMetrics(ProcessorContext<?, ?> context) {
        sensors = new StageSensors(context, "aggregate");
        switchesIn = sensors.counter(SWITCHES_IN);
        statsOut = sensors.counter(STATS_OUT);
        windowsClosed = sensors.counter(WINDOWS_CLOSED);
        duplicateBatches = sensors.counter(DUPLICATE_BATCHES);
        sessionsEnded = sensors.counter(SESSIONS_ENDED);
        sessionsForgotten = sensors.counter(SESSIONS_FORGOTTEN);
        sessionsOpen = sensors.gauge(SESSIONS_OPEN);
        latestSwitch = sensors.gauge(LATEST_SWITCH_NANOS);
    }

    void close() {
        sensors.close();
    }
}
