package io.swapstream.ingest;

import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * {@code ingest --watch --http}: what the host-side alerts need (docs/operations.md), on the same /metrics as the
 * stages' (Prometheus text, OpenMetrics or protobuf as asked; every family with {@code stage="ingest"}): the
 * backlog in the watched folder, the age of each host's newest file, the collection script's last status, and
 * the watcher's own counts. The folder and the status file are read at each scrape, not by the publishing loop,
 * so they stay true while Kafka is away.
 */
public final class IngestMetrics implements MultiCollector, AutoCloseable {
    private static final String STAGE = "ingest";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Path dir;
    private final Function<Path, String> hostOf;
    /** The watcher's one host (the collection script's host), or null when each file names its own. */
    private final String host;
    private final LongSupplier buffersOut, sessionsOpen, sessionsEnded, nowMs;

    public IngestMetrics(Path dir, Function<Path, String> hostOf, String host, LongSupplier buffersOut, LongSupplier sessionsOpen,
                  LongSupplier sessionsEnded, LongSupplier nowMs) {
        this.dir = dir;
        this.hostOf = hostOf;
        this.host = host;
        this.buffersOut = buffersOut;
        this.sessionsOpen = sessionsOpen;
        this.sessionsEnded = sessionsEnded;
        this.nowMs = nowMs;
        new JvmMemoryMetrics().bindTo(registry);
        registry.getPrometheusRegistry().register(this);
    }

    @Override
    public MetricSnapshots collect() {
        long now = nowMs.getAsLong();
        Labels stage = Labels.of("stage", STAGE);
        List<MetricSnapshot> out = new ArrayList<>();
        try {
            WatchedFolder f = WatchedFolder.scan(dir, hostOf);
            out.add(gauge("swapstream_ingest_backlog_files", "trace files (.etl) in the watched folder: the one being written,"
                    + " and those not yet published and deleted", null, stage, f.files()));
            out.add(gauge("swapstream_ingest_backlog_bytes", "bytes of the trace files in the watched folder", Unit.BYTES, stage, f.bytes()));
            GaugeSnapshot.Builder age = GaugeSnapshot.builder().name("swapstream_ingest_newest_file_age_seconds").unit(Unit.SECONDS)
                    .help("seconds since the host's newest trace file in the watched folder was created: above the rotation"
                            + " interval, its logger has stopped making files");
            f.newestCreatedMs().forEach((h, created) -> age.dataPoint(GaugeDataPointSnapshot.builder()
                    .labels(stage.add("host", h)).value(Math.max(0, now - created) / 1000.0).build()));
            out.add(age.build());
        } catch (IOException e) {
            // the folder cannot be listed now: its gauges are absent, which absent() alerts on
        }
        CollectorStatus s = CollectorStatus.read(dir);
        if (s != null) {
            Labels l = host == null ? stage : stage.add("host", host);
            out.add(gauge("swapstream_ingest_collector_ok", "1 when the collection script's last run did what it should, 0 when it"
                    + " failed (its message is in the Windows event log and the status file)", null, l, s.ok() ? 1 : 0));
            if (s.timeMs() != null) {
                out.add(gauge("swapstream_ingest_collector_status_age_seconds", "seconds since the collection script last ran",
                        Unit.SECONDS, l, Math.max(0, now - s.timeMs()) / 1000.0));
            }
            if (s.eventsLost() != null) {
                out.add(gauge("swapstream_ingest_collector_events_lost", "EventsLost of the trace session, as the collection script"
                        + " last read it (of the session it stopped, or of the running one)", null, l, s.eventsLost()));
            }
            if (s.buffersLost() != null) {
                out.add(gauge("swapstream_ingest_collector_buffers_lost", "LogBuffersLost and RealTimeBuffersLost of the trace session,"
                        + " as the collection script last read them", null, l, s.buffersLost()));
            }
        }
        out.add(CounterSnapshot.builder().name("swapstream_ingest_buffers_out").help("buffers published by this watcher")
                .dataPoint(CounterDataPointSnapshot.builder().labels(stage).value(buffersOut.getAsLong()).build()).build());
        out.add(gauge("swapstream_ingest_sessions_open", "sessions (files) this watcher is publishing", null, stage, sessionsOpen.getAsLong()));
        out.add(CounterSnapshot.builder().name("swapstream_ingest_sessions_ended").help("sessions this watcher ended")
                .dataPoint(CounterDataPointSnapshot.builder().labels(stage).value(sessionsEnded.getAsLong()).build()).build());
        return new MetricSnapshots(out);
    }

    private static GaugeSnapshot gauge(String name, String help, Unit unit, Labels labels, double value) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        if (unit != null) b.unit(unit);
        return b.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(value).build()).build();
    }

    /** The exposition a scraper asks for by its Accept header. */
    public byte[] scrape(String accept) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        registry.scrape(out, accept == null ? "" : accept);
        return out.toByteArray();
    }

    @Override
    public void close() {
        registry.close();
    }
}
