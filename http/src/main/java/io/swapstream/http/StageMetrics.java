package io.swapstream.http;

import static io.swapstream.stage.StageSensors.*;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.swapstream.stage.StageSensors;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleBinaryOperator;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A stage's Prometheus metrics: Kafka Streams' own (with its consumers' and producers', and the stage's
 * per-task sensors, tagged by thread and task), the JVM's memory, and the stage's totals over its tasks,
 * named {@code swapstream_*} with a {@code stage} tag.
 */
public final class StageMetrics implements AutoCloseable {
    private static final String[] COUNTERS = {BUFFERS_IN, SWITCHES_IN, SWITCHES_OUT, STATS_OUT, WINDOWS_CLOSED, DUPLICATE_BATCHES,
            SESSIONS_ENDED, SESSIONS_FORGOTTEN, BUFFERS_LOST, EVENTS_LOST, SWITCHES_OUT_OF_ORDER, ROWS_IN, ROLLUP_LATE_ROWS, ROLLUPS_OUT, ROLLUP_REVISIONS_OUT};
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final KafkaStreamsMetrics streamsMetrics;
    private final KafkaStreams streams;
    private final String stage;
    private final Set<String> reasonsRegistered = new HashSet<>();

    public StageMetrics(KafkaStreams streams, String stage) {
        this.streams = streams;
        this.stage = stage;
        this.streamsMetrics = new KafkaStreamsMetrics(streams);
        streamsMetrics.bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        for (String name : COUNTERS) {
            String metric = name + "-total";
            FunctionCounter.builder(prometheusName(name), streams, s -> total(s, stage, metric)).tag(STAGE_TAG, stage)
                    .description(DESCRIPTIONS.get(name)).register(registry);
        }
        gauge(SESSIONS_OPEN, Double::sum);
        gauge(MERGE_QUEUED_ITEMS, Double::sum);
        gauge(DECODE_CHECKPOINT_BYTES, Math::max);
        Gauge.builder("swapstream_event_lag_seconds", streams, s -> eventLagSeconds(combine(s, stage, LATEST_SWITCH_NANOS, Math::max)))
                .tag(STAGE_TAG, stage).description("wall-clock time minus the time of the latest switch this stage has emitted (decode)"
                        + " or taken (aggregate): how far the merge, and the stages, hold back").register(registry);
        Gauge.builder("swapstream_lag_records", streams, StageMetrics::lag).tag(STAGE_TAG, stage)
                .description("records behind the end of the input topics, summed over this instance's partitions").register(registry);
    }

    private void gauge(String name, DoubleBinaryOperator over) {
        Gauge.builder(prometheusName(name), streams, s -> combine(s, stage, name, over)).tag(STAGE_TAG, stage).description(DESCRIPTIONS.get(name))
                .register(registry);
    }

    static String prometheusName(String name) {
        return "swapstream_" + name.replace('-', '_');
    }

    /** A counter of the stage's tasks in this instance, summed. */
    public static double total(KafkaStreams streams, String stage, String metric) {
        return combine(streams, stage, metric, Double::sum);
    }

    /** A metric of the stage's tasks in this instance, combined by {@code over}; 0 when no task has it. */
    public static double combine(KafkaStreams streams, String stage, String metric, DoubleBinaryOperator over) {
        double v = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(metric) && n.group().equals(StageSensors.GROUP) && stage.equals(n.tags().get(STAGE_TAG))
                    && e.getValue().metricValue() instanceof Number x) {
                v = over.applyAsDouble(v, x.doubleValue());
            }
        }
        return v;
    }

    static double eventLagSeconds(double latestSwitchNanos) {
        if (latestSwitchNanos <= 0) return Double.NaN;
        java.time.Instant now = java.time.Instant.now();
        return (now.getEpochSecond() * 1e9 + now.getNano() - latestSwitchNanos) / 1e9;
    }

    public static double lag(KafkaStreams streams) {
        double lag = 0;
        for (var e : streams.metrics().entrySet()) {
            if (e.getKey().name().equals("records-lag") && e.getKey().group().equals("consumer-fetch-manager-metrics")
                    && e.getValue().metricValue() instanceof Number n && !Double.isNaN(n.doubleValue())) {
                lag += n.doubleValue();
            }
        }
        return lag;
    }

    /** The Prometheus text; dead-letter reasons seen since the last scrape get their series first. */
    public String scrape() {
        synchronized (reasonsRegistered) {
            String metric = DEAD_LETTERS + "-total";
            for (MetricName n : streams.metrics().keySet()) {
                String reason = n.tags().get(REASON_TAG);
                if (reason == null || !n.name().equals(metric) || !n.group().equals(GROUP) || !reasonsRegistered.add(reason)) continue;
                FunctionCounter.builder(prometheusName(DEAD_LETTERS), streams, s -> byReason(s, metric, reason)).tag(STAGE_TAG, stage)
                        .tag(REASON_TAG, reason).description(DESCRIPTIONS.get(DEAD_LETTERS)).register(registry);
            }
        }
        return registry.scrape();
    }

    private double byReason(KafkaStreams s, String metric, String reason) {
        double v = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : s.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(metric) && n.group().equals(GROUP) && reason.equals(n.tags().get(REASON_TAG))
                    && e.getValue().metricValue() instanceof Number x) {
                v += x.doubleValue();
            }
        }
        return v;
    }

    @Override
    public void close() {
        streamsMetrics.close();
        registry.close();
    }
}
