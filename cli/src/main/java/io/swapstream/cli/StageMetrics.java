package io.swapstream.cli;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.swapstream.schemas.StageCounters;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A stage's Prometheus metrics: Kafka Streams' own (with its consumers' and producers'), the JVM's
 * memory, and Swapstream's counters, named {@code swapstream_*} with a {@code stage} tag.
 */
final class StageMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final KafkaStreamsMetrics streamsMetrics;
    private final StageCounters counters;
    private final Set<String> kindsRegistered = new HashSet<>();

    StageMetrics(KafkaStreams streams, StageCounters counters) {
        this.counters = counters;
        this.streamsMetrics = new KafkaStreamsMetrics(streams);
        streamsMetrics.bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        String stage = counters.stage;
        counter("swapstream_buffers_in", "raw trace buffers taken", counters.buffersIn);
        counter("swapstream_switches_in", "context switches taken", counters.switchesIn);
        counter("swapstream_switches_out", "context switches sent on", counters.switchesOut);
        counter("swapstream_stats_out", "ThreadStats rows emitted", counters.statsOut);
        counter("swapstream_windows_closed", "windows emitted final", counters.windowsClosed);
        counter("swapstream_duplicate_batches", "batches skipped: the session's committed state had taken them", counters.duplicateBatches);
        counter("swapstream_sessions_ended", "sessions ended", counters.sessionsEnded);
        counter("swapstream_sessions_forgotten", "ended sessions that left the stores, their retention passed", counters.sessionsForgotten);
        counter("swapstream_buffers_lost", "buffers of ended sessions that were not decoded", counters.buffersLost);
        counter("swapstream_events_lost", "events the loggers reported lost", counters.eventsLost);
        counter("swapstream_switches_out_of_order", "switches a live session's merge emitted after later ones (its maximum lateness"
                + " or memory cap let those out first): no derived times", counters.switchesOutOfOrder);
        Gauge.builder("swapstream_merge_queued_items", counters, StageCounters::mergeQueued).tag("stage", stage)
                .description("items the open sessions' time-ordered merges hold, waiting for what their processors may still write")
                .register(registry);
        Gauge.builder("swapstream_decode_checkpoint_bytes", counters, StageCounters::largestCheckpoint).tag("stage", stage)
                .description("the largest last decoder checkpoint of an open session: its merge's items and live threads").register(registry);
        Gauge.builder("swapstream_event_lag_seconds", counters.latestSwitchNanos, StageMetrics::eventLagSeconds).tag("stage", stage)
                .description("wall-clock time minus the time of the latest switch this stage has emitted (decode) or taken"
                        + " (aggregate): how far the merge, and the stages, hold back").register(registry);
        Gauge.builder("swapstream_sessions_open", counters.sessionsOpen, Number::doubleValue).tag("stage", stage)
                .description("sessions with state in this instance").register(registry);
        Gauge.builder("swapstream_lag_records", streams, StageMetrics::lag).tag("stage", stage)
                .description("records behind the end of the input topics, summed over this instance's partitions").register(registry);
    }

    private void counter(String name, String description, LongAdder value) {
        FunctionCounter.builder(name, value, LongAdder::doubleValue).tag("stage", counters.stage).description(description)
                .register(registry);
    }

    static double eventLagSeconds(java.util.concurrent.atomic.AtomicLong latestSwitchNanos) {
        long t = latestSwitchNanos.get();
        if (t == Long.MIN_VALUE) return Double.NaN;
        java.time.Instant now = java.time.Instant.now();
        return (now.getEpochSecond() * 1_000_000_000L + now.getNano() - t) / 1e9;
    }

    static double lag(KafkaStreams streams) {
        double lag = 0;
        for (var e : streams.metrics().entrySet()) {
            if (e.getKey().name().equals("records-lag") && e.getKey().group().equals("consumer-fetch-manager-metrics")
                    && e.getValue().metricValue() instanceof Number n && !Double.isNaN(n.doubleValue())) {
                lag += n.doubleValue();
            }
        }
        return lag;
    }

    /** The Prometheus text; dead-letter kinds seen since the last scrape get their series first. */
    String scrape() {
        synchronized (kindsRegistered) {
            counters.deadLettersByKind.forEach((kind, n) -> {
                if (kindsRegistered.add(kind)) {
                    FunctionCounter.builder("swapstream_dead_letters", n, LongAdder::doubleValue).tag("stage", counters.stage)
                            .tag("reason", kind).description("records sent to the dead letters, by reason").register(registry);
                }
            });
        }
        return registry.scrape();
    }

    @Override
    public void close() {
        streamsMetrics.close();
        registry.close();
    }
}
