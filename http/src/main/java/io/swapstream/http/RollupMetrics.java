package io.swapstream.http;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.HostStatsAdded;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ProcessStatsAdded;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fleet's statistics as Prometheus metrics, from the roll-up rows: per process name and per host, the
 * ready (and for processes, wait) times as histograms, run time and switch-ins as counters. Cumulative since
 * this instance started (a restart is a counter reset); each row counts once: a window's row at revision 0
 * whole, a later revision only for what it {@code added}. The processes (hosts) with the most ready time
 * lately have series of their own, at most a set number ({@link TopNames}); the rest add up under
 * {@value #OTHER}. A series is exposed at zero the first time it is collected, whatever it has counted: a
 * scrape sees 0 and then the value, so {@code rate()} and {@code increase()} count a new host's or process's
 * first window (a series that appears at its full value has no earlier sample to increase from).
 */
public final class RollupMetrics implements MultiCollector {
    public static final String OTHER = "_other";
    /** The process label of threads whose process the trace did not name: the one name the API, pages and tables give them. */
    public static final String UNKNOWN_PROCESS = io.swapstream.aggregate.WakeEdges.UNKNOWN_NAME;
    private static final LatencyHistogram EMPTY = new LatencyHistogram();

    /** The other dimension's members with series of their own under a name: hosts of a process, processes of a host. */
    static final int PARTNERS = 5;

    /**
     * What one row adds to its group's series; {@code top} the ready time of the other dimension's five
     * members with the most (a window's first row; null for a revision, whose rows are not broken down so).
     */
    private record Contribution(ByteBuffer readySketch, long readySumNanos, ByteBuffer waitSketch, long waitSumNanos, long runSumNanos,
                                long switchIns, Map<String, Long> top) {}

    /** One series' counts. */
    private static final class Series {
        final LatencyHistogram ready = new LatencyHistogram();
        final LatencyHistogram wait = new LatencyHistogram();
        long runNanos;
        long switchIns;
        /** Ready time of the partners with series of their own, and of the rest. */
        final TopNames partnerRank = new TopNames(PARTNERS);
        final Map<String, long[]> partners = new HashMap<>();
        final long[] otherPartners = new long[1];
        /** Collected before: its values are exposed; else zero, once. Likewise for each partner's series and the rest's. */
        boolean shown;
        final java.util.Set<String> partnersShown = new java.util.HashSet<>();
        boolean otherPartnersShown;

        void add(Contribution c, long windowStart) {
            ready.add(c.readySketch, c.readySumNanos);
            wait.add(c.waitSketch, c.waitSumNanos);
            runNanos += c.runSumNanos;
            switchIns += c.switchIns;
            if (c.top == null) return;
            c.top.forEach((partner, nanos) -> {
                String name = partner.isEmpty() ? UNKNOWN_PROCESS : partner;
                TopNames.Admission a = partnerRank.note(name, nanos, windowStart);
                if (a.displaced() != null) {
                    partners.remove(a.displaced());
                    partnersShown.remove(a.displaced());
                }
                (a.admitted() ? partners.computeIfAbsent(name, n -> new long[1]) : otherPartners)[0] += nanos;
            });
        }
    }

    /** Process names, or hosts: the admitted names' series and the rest's sum. */
    private static final class Dimension {
        final String label;
        final TopNames top;
        final Map<String, Series> series = new HashMap<>();
        final Series other = new Series();

        Dimension(String label, int limit) {
            this.label = label;
            this.top = new TopNames(limit);
        }

        void take(String name, long windowStart, Contribution c) {
            TopNames.Admission a = top.note(name, c.readySumNanos, windowStart);
            if (a.displaced() != null) series.remove(a.displaced());
            if (a.admitted()) series.computeIfAbsent(name, n -> new Series()).add(c, windowStart);
            else other.add(new Contribution(c.readySketch, c.readySumNanos, c.waitSketch, c.waitSumNanos, c.runSumNanos, c.switchIns, null),
                    windowStart);
        }

        /** The series by label value, sorted, {@value #OTHER} last when it has counted anything. */
        List<Map.Entry<Labels, Series>> all() {
            List<Map.Entry<Labels, Series>> out = new ArrayList<>();
            new TreeMap<>(series).forEach((name, s) -> out.add(Map.entry(Labels.of(label, name), s)));
            if (other.ready.count() > 0 || other.wait.count() > 0 || other.switchIns > 0) out.add(Map.entry(Labels.of(label, OTHER), other));
            return out;
        }
    }

    private final Dimension processes;
    private final Dimension hosts;

    /** @param processes how many process names get series of their own; {@code hosts} the same for hosts */
    public RollupMetrics(int processes, int hosts) {
        this.processes = new Dimension("process", processes);
        this.hosts = new Dimension("host", hosts);
    }

    /** Counts a process roll-up row (what a revision adds, for a revision). */
    public synchronized void take(ProcessStats row) {
        Contribution c;
        if (row.getRevision() == 0) {
            c = new Contribution(row.getReadySketch(), row.getReadySumNanos(), row.getWaitSketch(), row.getWaitSumNanos(), row.getRunSumNanos(),
                    row.getSwitchInCount(), row.getTopHosts());
        } else if (row.getAdded() != null) {
            ProcessStatsAdded a = row.getAdded();
            c = new Contribution(a.getReadySketch(), a.getReadySumNanos(), a.getWaitSketch(), a.getWaitSumNanos(), a.getRunSumNanos(),
                    a.getSwitchInCount(), null);
        } else {
            return;
        }
        processes.take(row.getProcessName() == null ? UNKNOWN_PROCESS : row.getProcessName(), row.getWindowStartNanos(), c);
    }

    /** Counts a host roll-up row (what a revision adds, for a revision). */
    public synchronized void take(HostStats row) {
        Contribution c;
        if (row.getRevision() == 0) {
            c = new Contribution(row.getReadySketch(), row.getReadySumNanos(), null, 0, row.getRunSumNanos(), row.getSwitchInCount(),
                    row.getTopProcesses());
        } else if (row.getAdded() != null) {
            HostStatsAdded a = row.getAdded();
            c = new Contribution(a.getReadySketch(), a.getReadySumNanos(), null, 0, a.getRunSumNanos(), a.getSwitchInCount(), null);
        } else {
            return;
        }
        hosts.take(row.getHost(), row.getWindowStartNanos(), c);
    }

    @Override
    public synchronized MetricSnapshots collect() {
        List<Map.Entry<Labels, Series>> p = processes.all();
        List<Map.Entry<Labels, Series>> h = hosts.all();
        MetricSnapshots out = MetricSnapshots.of(
                histogram("swapstream_process_ready_seconds", "ready time of the fleet's threads per process name: from being made ready"
                        + " to running (closed roll-up windows)", p, true),
                histogram("swapstream_process_wait_seconds", "wait time of the fleet's threads per process name: from switching out to"
                        + " switching in again (closed roll-up windows)", p, false),
                counter("swapstream_process_run_seconds", "run time of the fleet's threads per process name", p, s -> s.runNanos / 1e9, true),
                counter("swapstream_process_switches", "switch-ins of the fleet's threads per process name", p, s -> s.switchIns, false),
                histogram("swapstream_host_ready_seconds", "ready time of a host's threads (closed roll-up windows)", h, true),
                counter("swapstream_host_run_seconds", "run time of a host's threads", h, s -> s.runNanos / 1e9, true),
                counter("swapstream_host_switches", "switch-ins of a host's threads", h, s -> s.switchIns, false),
                partners("swapstream_process_host_ready_seconds", "ready time of a process name's threads on a host, while the host was"
                        + " among the five with the most in a window (a window's first row)", p, "host"),
                partners("swapstream_host_process_ready_seconds", "ready time of a process's threads on a host, while the process was"
                        + " among the host's five with the most in a window (a window's first row)", h, "process"));
        for (List<Map.Entry<Labels, Series>> series : List.of(p, h)) {
            for (Map.Entry<Labels, Series> e : series) {
                Series s = e.getValue();
                s.shown = true;
                s.partnersShown.addAll(s.partners.keySet());
                if (s.otherPartners[0] > 0) s.otherPartnersShown = true;
            }
        }
        return out;
    }

    private static CounterSnapshot partners(String name, String help, List<Map.Entry<Labels, Series>> series, String partnerLabel) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help).unit(Unit.SECONDS);
        for (Map.Entry<Labels, Series> e : series) {
            Series s = e.getValue();
            new TreeMap<>(s.partners).forEach((partner, nanos) -> b.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(e.getKey().add(partnerLabel, partner)).value(s.shown && s.partnersShown.contains(partner) ? nanos[0] / 1e9 : 0).build()));
            if (s.otherPartners[0] > 0) {
                b.dataPoint(CounterDataPointSnapshot.builder().labels(e.getKey().add(partnerLabel, OTHER))
                        .value(s.shown && s.otherPartnersShown ? s.otherPartners[0] / 1e9 : 0).build());
            }
        }
        return b.build();
    }

    private static HistogramSnapshot histogram(String name, String help, List<Map.Entry<Labels, Series>> series, boolean ready) {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(name).help(help).unit(Unit.SECONDS);
        for (Map.Entry<Labels, Series> e : series) {
            b.dataPoint((!e.getValue().shown ? EMPTY : ready ? e.getValue().ready : e.getValue().wait).snapshot(e.getKey()));
        }
        return b.build();
    }

    private static CounterSnapshot counter(String name, String help, List<Map.Entry<Labels, Series>> series,
                                           java.util.function.ToDoubleFunction<Series> value, boolean seconds) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        if (seconds) b.unit(Unit.SECONDS);
        for (Map.Entry<Labels, Series> e : series) {
            b.dataPoint(CounterDataPointSnapshot.builder().labels(e.getKey()).value(e.getValue().shown ? value.applyAsDouble(e.getValue()) : 0).build());
        }
        return b.build();
    }

    @Override
    public List<String> getPrometheusNames() {
        return List.of("swapstream_process_ready_seconds", "swapstream_process_wait_seconds", "swapstream_process_run_seconds",
                "swapstream_process_switches", "swapstream_host_ready_seconds", "swapstream_host_run_seconds", "swapstream_host_switches",
                "swapstream_process_host_ready_seconds", "swapstream_host_process_ready_seconds");
    }
}
