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
    final Sensor incompleteStatsOut;
    final Sensor wakeEdgesOut;
    final Sensor windowsClosed;
    final Sensor duplicateBatches;
    final Sensor sessionsEnded;
    final Sensor sessionsForgotten;
    final Sensor sessionsOpen;
    final Sensor accumulatorsInMemory;
    private final Sensor eventLag;
    private long newestTaken = Long.MIN_VALUE;
    private long newestClosedEnd = Long.MIN_VALUE;

    AggregateMetrics(ProcessorContext<?, ?> context) {
        sensors = new StageSensors(context, "aggregate");
        switchesIn = sensors.counter(SWITCHES_IN);
        statsOut = sensors.counter(STATS_OUT);
        incompleteStatsOut = sensors.counter(INCOMPLETE_STATS_OUT);
        wakeEdgesOut = sensors.counter(WAKE_EDGES_OUT);
        windowsClosed = sensors.counter(WINDOWS_CLOSED);
        duplicateBatches = sensors.counter(DUPLICATE_BATCHES);
        sessionsEnded = sensors.counter(SESSIONS_ENDED);
        sessionsForgotten = sensors.counter(SESSIONS_FORGOTTEN);
        sessionsOpen = sensors.gauge(SESSIONS_OPEN);
        accumulatorsInMemory = sensors.gauge(ACCUMULATORS_IN_MEMORY);
        eventLag = sensors.gauge(EVENT_LAG_NANOS);
    }

    /** A switch of this Unix time, ns, was taken. */
    void taken(long nanos) {
        if (nanos > newestTaken) {
            newestTaken = nanos;
            recordLag();
        }
    }

    /** A window ending at this Unix time, ns, went out final. */
    void closed(long endNanos) {
        if (endNanos > newestClosedEnd) {
            newestClosedEnd = endNanos;
            recordLag();
        }
    }

    /** The newest switch taken minus the end of the newest window closed: how much of what came is not final yet. */
    private void recordLag() {
        eventLag.record(newestClosedEnd == Long.MIN_VALUE || newestTaken <= newestClosedEnd ? 0 : newestTaken - newestClosedEnd);
    }

    void close() {
        sensors.close();
    }
}
