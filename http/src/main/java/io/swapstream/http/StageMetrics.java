package io.swapstream.http;

import static io.swapstream.stage.StageSensors.*;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.swapstream.stage.StageSensors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleBinaryOperator;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A stage's Prometheus metrics: its own families only (its counters and gauges summed over its tasks,
 * tagged with the stage), a few of Kafka's client metrics an operator watches (summed or the largest over
 * the instance's clients, no per-client labels, so a restart makes no new series), and the JVM's memory.
 * Every Kafka metric, with Kafka's own labels, is behind {@code --metrics-kafka all}.
 */
public final class StageMetrics implements AutoCloseable {
    /** The stages' own counters. */
    private static final Map<String, List<String>> COUNTERS = Map.of(
            "decode", List.of(RECORDS_IN, BUFFERS_IN, SWITCHES_OUT, SWITCHES_OUT_OF_ORDER, SESSIONS_ENDED, SESSIONS_FORGOTTEN, BUFFERS_LOST,
                    EVENTS_LOST),
            "aggregate", List.of(SWITCHES_IN, STATS_OUT, INCOMPLETE_STATS_OUT, WAKE_EDGES_OUT, WINDOWS_CLOSED, DUPLICATE_BATCHES, SESSIONS_ENDED, SESSIONS_FORGOTTEN),
            "rollup", List.of(ROWS_IN, ROLLUPS_OUT, ROLLUP_LATE_ROWS, ROLLUP_REVISIONS_OUT, WINDOWS_CLOSED));

    /** A Kafka client metric worth a series of its own: its group and name, how instances combine, and what it shows. */
    private record KafkaMetric(String group, String name, String exported, boolean counter, DoubleBinaryOperator over, String help) {}

    private static final List<KafkaMetric> KAFKA = List.of(
            new KafkaMetric("stream-metrics", "alive-stream-threads", "swapstream_kafka_streams_alive_threads", false, Double::sum,
                    "Kafka Streams: stream threads running"),
            new KafkaMetric("stream-thread-metrics", "process-total", "swapstream_kafka_streams_processed_records", true, Double::sum,
                    "Kafka Streams: records processed by the stream threads"),
            new KafkaMetric("stream-thread-metrics", "commit-total", "swapstream_kafka_streams_commits", true, Double::sum,
                    "Kafka Streams: commits (each a transaction under exactly-once)"),
            new KafkaMetric("stream-thread-metrics", "commit-latency-max", "swapstream_kafka_streams_commit_latency_max_seconds", false,
                    StageMetrics::max, "Kafka Streams: the longest commit of the last metrics window"),
            new KafkaMetric("stream-task-metrics", "dropped-records-total", "swapstream_kafka_streams_dropped_records", true, Double::sum,
                    "Kafka Streams: records dropped (deserialization errors, late records)"),
            new KafkaMetric("consumer-coordinator-metrics", "rebalance-total", "swapstream_kafka_rebalances", true, Double::sum,
                    "Kafka consumer group rebalances this instance took part in"),
            new KafkaMetric("consumer-coordinator-metrics", "assigned-partitions", "swapstream_kafka_assigned_partitions", false, Double::sum,
                    "Kafka: input partitions assigned to this instance, its share of the stage's tasks (0 while it holds none)"),
            new KafkaMetric("consumer-fetch-manager-metrics", "records-lag-max", "swapstream_kafka_records_lag_max", false, StageMetrics::max,
                    "Kafka: the largest lag of a partition this instance reads, records"),
            new KafkaMetric("producer-metrics", "record-error-total", "swapstream_kafka_producer_record_errors", true, Double::sum,
                    "Kafka producers: records that failed to send"),
            new KafkaMetric("producer-metrics", "record-send-total", "swapstream_kafka_producer_records_sent", true, Double::sum,
                    "Kafka producers: records sent"));

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final KafkaStreamsMetrics streamsMetrics;
    private final KafkaStreams streams;
    private final String stage;
    private final Set<String> reasonsRegistered = new HashSet<>();
    /**
     * The instance's metrics as one scrape reads them, by name: {@code KafkaStreams.metrics()} copies every client's
     * metrics at each call, and each series called it and read them all (a scrape a second was 6% of a stage's CPU at
     * 1,000 hosts).
     */
    private volatile Map<String, Map<MetricName, Metric>> scraping;

    /** Requests this process has sent to the schema registry: a flat line once every schema's id is known. */
    public StageMetrics schemaRegistry(io.swapstream.schemas.serde.SchemaRegistry r) {
        FunctionCounter.builder("swapstream_schema_registry_requests", r, io.swapstream.schemas.serde.SchemaRegistry::requests)
                .tag(STAGE_TAG, stage).description("requests sent to the schema registry (registrations and schema lookups by id);"
                        + " none in steady state: each answer is kept").register(registry);
        return this;
    }

    /** @param allKafkaMetrics every Kafka client metric with its labels (thread, client and task ids), as Micrometer binds them */
    public StageMetrics(KafkaStreams streams, String stage, boolean allKafkaMetrics) {
        this.streams = streams;
        this.stage = stage;
        this.streamsMetrics = allKafkaMetrics ? new KafkaStreamsMetrics(streams) : null;
        if (streamsMetrics != null) streamsMetrics.bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        for (String name : COUNTERS.getOrDefault(stage, List.of())) {
            String metric = name + "-total";
            FunctionCounter.builder(prometheusName(name), streams, s -> combine(metrics(metric), stage, metric, Double::sum)).tag(STAGE_TAG, stage)
                    .description(DESCRIPTIONS.get(name)).register(registry);
        }
        if (stage.equals("decode")) {
            gauge(SESSIONS_OPEN, Double::sum);
            gauge(MERGE_QUEUED_ITEMS, Double::sum);
            gauge(DECODE_CHECKPOINT_BYTES, StageMetrics::max);
            for (String reason : DEAD_LETTER_REASONS) registerReason(reason);
        } else if (stage.equals("aggregate")) {
            gauge(SESSIONS_OPEN, Double::sum);
            gauge(ACCUMULATORS_IN_MEMORY, Double::sum);
        }
        if (!stage.equals("rollup")) {
            Gauge.builder("swapstream_event_lag_seconds", streams, s -> combine(metrics(EVENT_LAG_NANOS), stage, EVENT_LAG_NANOS, StageMetrics::max) / 1e9)
                    .tag(STAGE_TAG, stage).description("how far behind the newest event time this stage has read its output is: decode, the"
                            + " most a session's merge holds back; aggregate, the newest switch taken minus the end of the newest window"
                            + " closed. 0 when caught up, whatever the trace's own time").register(registry);
        }
        Gauge.builder("swapstream_lag_records", streams, s -> lag(metrics("records-lag"))).tag(STAGE_TAG, stage)
                .description("records behind the end of the input topics, summed over this instance's partitions").register(registry);
        if (streamsMetrics == null) {
            for (KafkaMetric k : KAFKA) {
                if (k.counter) {
                    FunctionCounter.builder(k.exported, streams, s -> kafka(metrics(k.name), k)).tag(STAGE_TAG, stage).description(k.help).register(registry);
                } else {
                    Gauge.builder(k.exported, streams, s -> kafka(metrics(k.name), k)).tag(STAGE_TAG, stage).description(k.help).register(registry);
                }
            }
        }
    }

    private static double max(double a, double b) {
        return Math.max(a, b);
    }

    private void gauge(String name, DoubleBinaryOperator over) {
        Gauge.builder(prometheusName(name), streams, s -> combine(metrics(name), stage, name, over)).tag(STAGE_TAG, stage).description(DESCRIPTIONS.get(name))
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
        return combine(streams.metrics(), stage, metric, over);
    }

    private static double combine(Map<MetricName, ? extends Metric> metrics, String stage, String metric, DoubleBinaryOperator over) {
        double v = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(metric) && n.group().equals(StageSensors.GROUP) && stage.equals(n.tags().get(STAGE_TAG))
                    && e.getValue().metricValue() instanceof Number x) {
                v = over.applyAsDouble(v, x.doubleValue());
            }
        }
        return v;
    }

    /** A Kafka client metric over every client of the instance; NaN (a metric not measured yet) counts as nothing. */
    private static double kafka(Map<MetricName, ? extends Metric> metrics, KafkaMetric k) {
        double v = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(k.name) && n.group().equals(k.group) && e.getValue().metricValue() instanceof Number x
                    && Double.isFinite(x.doubleValue())) {
                v = k.over.applyAsDouble(v, x.doubleValue());
            }
        }
        // Kafka measures latencies in ms; Prometheus names them in seconds
        return k.exported.endsWith("_seconds") ? v / 1000 : v;
    }

    public static double lag(KafkaStreams streams) {
        return lag(streams.metrics());
    }

    private static double lag(Map<MetricName, ? extends Metric> metrics) {
        double lag = 0;
        for (var e : metrics.entrySet()) {
            if (e.getKey().name().equals("records-lag") && e.getKey().group().equals("consumer-fetch-manager-metrics")
                    && e.getValue().metricValue() instanceof Number n && !Double.isNaN(n.doubleValue())) {
                lag += n.doubleValue();
            }
        }
        return lag;
    }

    /** Adds a collector's families to this stage's /metrics. */
    public void add(MultiCollector collector) {
        registry.getPrometheusRegistry().register(collector);
    }

    /** The Prometheus text. */
    public synchronized String scrape() {
        scraping = byName(streams.metrics());
        try {
            registerNewReasons();
            return registry.scrape();
        } finally {
            scraping = null;
        }
    }

    /** The exposition a scraper asks for by its Accept header (Prometheus text, OpenMetrics, or protobuf with native histograms). */
    public synchronized byte[] scrape(String accept) throws IOException {
        scraping = byName(streams.metrics());
        try {
            registerNewReasons();
            ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
            registry.scrape(out, accept == null ? "" : accept);
            return out.toByteArray();
        } finally {
            scraping = null;
        }
    }

    /** The instance's metrics named {@code name} (outside a scrape, all of them): during a scrape, from the one copy taken for it. */
    private Map<MetricName, ? extends Metric> metrics(String name) {
        Map<String, Map<MetricName, Metric>> m = scraping;
        return m != null ? m.getOrDefault(name, Map.of()) : streams.metrics();
    }

    private static Map<String, Map<MetricName, Metric>> byName(Map<MetricName, ? extends Metric> metrics) {
        Map<String, Map<MetricName, Metric>> m = new HashMap<>();
        metrics.forEach((n, v) -> m.computeIfAbsent(n.name(), k -> new HashMap<>()).put(n, v));
        return m;
    }

    /** The content type {@link #scrape(String)} writes for {@code accept}. */
    public static String contentType(String accept) {
        return io.prometheus.metrics.expositionformats.ExpositionFormats.init().findWriter(accept == null ? "" : accept).getContentType();
    }

    /** Dead-letter reasons the tasks counted that are not among the known ones get their series before the scrape. */
    private void registerNewReasons() {
        if (!stage.equals("decode")) return;
        String metric = DEAD_LETTERS + "-total";
        for (MetricName n : metrics(metric).keySet()) {
            String reason = n.tags().get(REASON_TAG);
            if (reason != null && n.name().equals(metric) && n.group().equals(GROUP)) registerReason(reason);
        }
    }

    private void registerReason(String reason) {
        synchronized (reasonsRegistered) {
            if (!reasonsRegistered.add(reason)) return;
            String metric = DEAD_LETTERS + "-total";
            FunctionCounter.builder(prometheusName(DEAD_LETTERS), streams, s -> byReason(metrics(metric), metric, reason)).tag(STAGE_TAG, stage)
                    .tag(REASON_TAG, reason).description(DESCRIPTIONS.get(DEAD_LETTERS)).register(registry);
        }
    }

    private static double byReason(Map<MetricName, ? extends Metric> metrics, String metric, String reason) {
        double v = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
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
        if (streamsMetrics != null) streamsMetrics.close();
        registry.close();
    }
}
