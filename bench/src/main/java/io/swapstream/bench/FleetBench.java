package io.swapstream.bench;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.OfflineRows;
import io.swapstream.local.ServiceException;
import io.swapstream.schemas.avro.ThreadStats;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;

/**
 * {@code bench --hosts N}: N hosts' live sessions at once through one decode and one aggregate
 * process, as a fleet runs. Each host's trace (2 processors, one busy thread: about 240 switches a
 * second; CSwitch events, 16 KiB buffers, a 1 s flush timer) is generated first, then written into a watched folder
 * buffer by buffer when its logger would have written it, all hosts in real time from one start;
 * {@code ingest --watch} follows them. Measured: the switches/s taken, each stage's heap (after a
 * GC) and RSS, the heap an open session costs, how long after a 60 s window's end its final rows
 * came, the ingester's CPU per buffer, the query API's top 25 with N sessions open; and every
 * session's rows against offline.
 */
public final class FleetBench {
    /** The command the stages run as, in processes of their own. */
    static final String SWAPSTREAM_MAIN = "io.swapstream.cli.Swapstream";

    static final long WINDOW_NANOS = 60_000_000_000L;
    private static final long FLUSH_TICKS = 10_000_000L; // 1 s in 100 ns units
    private static final long FILETIME_EPOCH_OFFSET = 116_444_736_000_000_000L;

    private final PrintWriter err;
    private final Path work;
    private final int hosts;
    private final int seconds;
    private final int instances;

    public FleetBench(PrintWriter err, Path work, int hosts, int seconds, int instances) {
        this.err = err;
        this.work = work;
        this.hosts = hosts;
        this.seconds = seconds;
        this.instances = instances;
    }

    /** Kafka client and Streams properties for the decode and aggregate processes (their --client-config); null for none. */
    public Path stageConfig;

    /** A stage's command line, with the run's stage properties when given. */
    private String[] stageArgs(String... args) {
        if (stageConfig == null) return args;
        String[] all = java.util.Arrays.copyOf(args, args.length + 2);
        all[args.length] = "--client-config";
        all[args.length + 1] = stageConfig.toString();
        return all;
    }

    /** The busiest threads of the run's processes over the mid-run interval: CPU share of one core, by process and thread name. */
    public volatile String threadCpu = "";

    /** The stages' own lag during the replay: p50 and max of each, sampled each second. */
    public volatile String lags = "";

    /** One second's reading of the stages: lags, and CPU and switches so far (for {@link SteadyCost}), {@code seconds} into the replay. */
    record Sample(double seconds, double decodeEventLag, double aggregateEventLag, double decodeInputLag, double aggregateInputLag,
                  double decodeCpu, double decodeSwitches, double aggregateCpu, double aggregateSwitches) {}

    static String lagSummary(List<Sample> samples) {
        if (samples.isEmpty()) return "";
        Map<String, java.util.function.ToDoubleFunction<Sample>> lags = new java.util.LinkedHashMap<>();
        lags.put("decode event lag s (the most a session's merge holds back)", Sample::decodeEventLag);
        lags.put("aggregate event lag s (newest switch taken minus the end of the newest window closed)", Sample::aggregateEventLag);
        lags.put("decode input lag records", Sample::decodeInputLag);
        lags.put("aggregate input lag records", Sample::aggregateInputLag);
        StringBuilder b = new StringBuilder();
        lags.forEach((name, lag) -> {
            double[] v = samples.stream().mapToDouble(lag).sorted().toArray();
            b.append(String.format("  %s: p50 %.1f, p99 %.1f, max %.1f%n", name, v[v.length / 2],
                    v[Math.max(0, (int) Math.ceil(v.length * 0.99) - 1)], v[v.length - 1]));
        });
        return b.toString();
    }

    /** Each second's sample as CSV, with where the hosts' windows end ({@code -Dswapstream.fleet.series}). */
    private static void writeSeries(Path file, List<Sample> samples, double firstWindowEnd) throws java.io.IOException {
        StringBuilder b = new StringBuilder(String.format("# the hosts' windows end %.1f s into the replay and every 60 s after%n", firstWindowEnd));
        b.append("seconds,decode_event_lag_s,aggregate_event_lag_s,decode_input_lag_records,"
                + "aggregate_input_lag_records,decode_cpu_s,decode_switches_out,aggregate_cpu_s,aggregate_switches_in\n");
        synchronized (samples) {
            for (Sample x : samples) {
                b.append(String.format("%.1f,%.2f,%.2f,%.0f,%.0f,%.3f,%.0f,%.3f,%.0f%n", x.seconds(), x.decodeEventLag(), x.aggregateEventLag(),
                        x.decodeInputLag(), x.aggregateInputLag(), x.decodeCpu(), x.decodeSwitches(), x.aggregateCpu(), x.aggregateSwitches()));
            }
        }
        Files.writeString(file, b);
    }

    /** What a run measured. */
    public record Result(int hosts, int instances, long switches, long buffers, double replaySecs, double drainSecs, double switchesPerSec,
                  long[] decodeHeap, long[] aggregateHeap, long decodeRss, long aggregateRss, double decodeBytesPerSession,
                  double aggregateBytesPerSession, double latencyP50, double latencyP99, int windows, double ingestCpuMsPerBuffer,
                  double decodeCpu, double aggregateCpu, List<WindowEndLag> latencyByWindowEnd, double apiP50Ms, double apiP99Ms, int rows, int rowsDiffering, int rowsMissing,
                  long switchesOutOfOrder, SteadyCost steady, OfflineCost offline) {
        /** The stages' CPU a switch over the replay and the drain, beside the offline code's for the same switches. */
        public double decodeMicrosPerSwitch() {
            return decodeCpu / switches * 1e6;
        }

        public double aggregateMicrosPerSwitch() {
            return aggregateCpu / switches * 1e6;
        }
    }

    /**
     * How long after one instant at which the hosts' windows end their final rows came: {@code endSecs} into the replay,
     * {@code windows} sessions' windows (the first such instant finds the stages' code not yet compiled).
     */
    public record WindowEndLag(double endSecs, int windows, double p50, double p99) {}

    /**
     * The stages' CPU a switch once running, over one window period: from {@link #SETTLE_SECS} after an instant at which
     * the hosts' windows end to as long after the next, the last such period in the replay after an instant at least
     * {@link #WARM_SECS} in ({@code windowEndSecs}, that first instant; NaN when there is none). A period holds one window
     * end's work and 60 s of switches between, whatever the windows' alignment: a span that held two window ends or none
     * cost a third more or less a switch. The first window end's burst, on code not yet compiled while the decode stage
     * still catches up with the fleet's start, and the drain are left out (a fleet's stages run for months). Without
     * such a period (a short {@code --seconds}), from a third into the replay to its end. The switches are each
     * stage's own count of those it sent on (decode) or took (aggregate) in that time; NaN when no sample fell in it.
     */
    public record SteadyCost(double windowEndSecs, double fromSecs, double toSecs, double decodeCpu, double decodeSwitches, double aggregateCpu,
                             double aggregateSwitches) {
        /** How long after a window end the period starts: past the burst of the window end before it. */
        static final double SETTLE_SECS = 15;
        /** The earliest a period's first window end may be: 170 s of replay always hold one period after it. */
        static final double WARM_SECS = 30;

        static SteadyCost of(List<Sample> samples, double firstWindowEndSecs, double replaySecs) {
            double end = Double.NaN;
            for (double w = firstWindowEndSecs; w + SETTLE_SECS + WINDOW_NANOS / 1e9 <= replaySecs; w += WINDOW_NANOS / 1e9) {
                if (w >= WARM_SECS) end = w;
            }
            if (Double.isNaN(end)) return of(samples, Double.NaN, replaySecs / 3.0, Double.MAX_VALUE);
            return of(samples, end, end + SETTLE_SECS, end + SETTLE_SECS + WINDOW_NANOS / 1e9);
        }

        private static SteadyCost of(List<Sample> samples, double windowEndSecs, double fromSecs, double toSecs) {
            Sample first = null;
            Sample last = null;
            synchronized (samples) {
                for (Sample s : samples) {
                    if (s.seconds() >= fromSecs && first == null) first = s;
                    if (s.seconds() <= toSecs) last = s;
                }
            }
            if (first == null || last == null || last.seconds() <= first.seconds()) {
                return new SteadyCost(windowEndSecs, fromSecs, fromSecs, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
            }
            return new SteadyCost(windowEndSecs, first.seconds(), last.seconds(), last.decodeCpu() - first.decodeCpu(),
                    last.decodeSwitches() - first.decodeSwitches(), last.aggregateCpu() - first.aggregateCpu(),
                    last.aggregateSwitches() - first.aggregateSwitches());
        }

        public double decodeMicrosPerSwitch() {
            return decodeCpu / decodeSwitches * 1e6;
        }

        public double aggregateMicrosPerSwitch() {
            return aggregateCpu / aggregateSwitches * 1e6;
        }
    }

    /**
     * The offline code's CPU on the same switches the stages took (each host's file as far as the run wrote it), on one
     * thread at a time: decoding alone, and decoding with the statistics (whole session, windows, wake edges), the
     * aggregate's share being the difference. Thread CPU, so the stages running beside it do not count in it.
     */
    public record OfflineCost(long switches, long decodeNanos, long decodeAndStatisticsNanos) {
        public double decodeMicrosPerSwitch() {
            return decodeNanos / 1e3 / switches;
        }

        public double statisticsMicrosPerSwitch() {
            return (decodeAndStatisticsNanos - decodeNanos) / 1e3 / switches;
        }
    }

    private final java.util.concurrent.atomic.AtomicLong offlineSwitches = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong offlineDecodeNanos = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong offlineAllNanos = new java.util.concurrent.atomic.AtomicLong();

    public Result run(String bootstrap) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds * 4L + 600).toNanos();
        String prefix = "fleet" + UUID.randomUUID().toString().substring(0, 6) + ".";
        String app = "fleet-" + prefix.substring(0, prefix.length() - 1);
        int partitions = 4;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            TopicSetup.ensure(admin, prefix, partitions, (short) 1);
        }
        // the traces, all starting at one instant: generated before, written later at their loggers' pace
        Path source = Files.createDirectories(work.resolve("source"));
        Path watched = Files.createDirectories(work.resolve("traces"));
        long startFileTime = System.currentTimeMillis() * 10_000 + FILETIME_EPOCH_OFFSET;
        long startEpochNanos = (startFileTime - FILETIME_EPOCH_OFFSET) * 100;
        long t0 = System.nanoTime();
        List<Path> files = generate(source, startFileTime);
        err.printf("bench: %d traces generated in %.1f s%n", hosts, (System.nanoTime() - t0) / 1e9);
        err.flush();
        long switches = 0;

        List<StageChild> decode = new ArrayList<>();
        List<StageChild> aggregate = new ArrayList<>();
        StageChild ingest = null;
        try {
            for (int i = 0; i < instances; i++) {
                int d = EmbeddedKafkaBroker.freePort();
                decode.add(StageChild.start(work, "decode-" + i, d, "-Xmx2g", stageArgs("decode", "-b", bootstrap, "--topic-prefix", prefix,
                        "--partitions", String.valueOf(partitions), "--state-dir", work.resolve("decode-" + i).toString(),
                        "--http", "127.0.0.1:" + d, "--application-id", app, "--instance-id", "d" + i)));
                int a = EmbeddedKafkaBroker.freePort();
                aggregate.add(StageChild.start(work, "aggregate-" + i, a, "-Xmx2g", stageArgs("aggregate", "-b", bootstrap, "--topic-prefix", prefix,
                        "--partitions", String.valueOf(partitions), "--state-dir", work.resolve("aggregate-" + i).toString(),
                        "--http", "127.0.0.1:" + a, "--application-id", app, "--instance-id", "a" + i, "--window", "60s")));
            }
            for (StageChild c : decode) c.awaitLog(": running", deadline);
            for (StageChild c : aggregate) c.awaitLog(": running", deadline);
            ingest = StageChild.start(work, "ingest", 0, "-Xmx1g", "ingest", "--watch", watched.toString(), "-b", bootstrap,
                    "--topic-prefix", prefix, "--host-from-file-name", "--flush-timer", "1s", "--quiet", "10s", "--poll", "250ms");
            long ingestPid = ingest.process().pid();
            ingest.awaitLog("watching", deadline);
            long[] decodeBase = heaps(decode);
            long[] aggregateBase = heaps(aggregate);
            err.printf("bench: %d hosts, stages running; heap after GC: decode %s MiB, aggregate %s MiB%n", hosts, BenchMeasures.mib(decodeBase),
                    BenchMeasures.mib(aggregateBase));
            err.flush();

            FinalRows rows = new FinalRows(bootstrap, prefix);
            // the stages' CPU from here: their start, and the heap measured before, left out
            double decodeCpuBefore = decode.stream().mapToDouble(StageChild::cpuSecs).sum();
            double aggregateCpuBefore = aggregate.stream().mapToDouble(StageChild::cpuSecs).sum();
            long replayStart = System.nanoTime();
            long replayWall = System.currentTimeMillis();
            rows.start();
            // each second, how far behind each stage says it is, to see where a late window's time goes
            List<Sample> lagSamples = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    try {
                        double d = 0;
                        double a = 0;
                        double dr = 0;
                        double ar = 0;
                        double ds = 0;
                        double as = 0;
                        double t = (System.nanoTime() - replayStart) / 1e9;
                        for (StageChild c : decode) {
                            String m = c.metrics();
                            d = Math.max(d, StageChild.sum(m, "swapstream_event_lag_seconds"));
                            dr += StageChild.sum(m, "swapstream_lag_records");
                            ds += StageChild.sum(m, "swapstream_switches_out_total");
                        }
                        for (StageChild c : aggregate) {
                            String m = c.metrics();
                            a = Math.max(a, StageChild.sum(m, "swapstream_event_lag_seconds"));
                            ar += StageChild.sum(m, "swapstream_lag_records");
                            as += StageChild.sum(m, "swapstream_switches_in_total");
                        }
                        lagSamples.add(new Sample(t, d, a, dr, ar, decode.stream().mapToDouble(StageChild::cpuSecs).sum(), ds,
                                aggregate.stream().mapToDouble(StageChild::cpuSecs).sum(), as));
                        Thread.sleep(1000);
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "fleet-bench-lag");
            sampler.setDaemon(true);
            sampler.start();
            long[] midDecode = new long[instances];
            long[] midAggregate = new long[instances];
            double[] api = {Double.NaN, Double.NaN};
            long[] rss = new long[2];
            // three quarters in, every session open: memory, and the query API under that load
            Thread mid = new Thread(() -> {
                try {
                    Thread.sleep(seconds * 750L);
                    for (int i = 0; i < instances; i++) {
                        midDecode[i] = decode.get(i).heapAfterGc();
                        midAggregate[i] = aggregate.get(i).heapAfterGc();
                    }
                    String histograms = System.getProperty("swapstream.fleet.histograms");
                    if (histograms != null) {
                        for (StageChild c : decode) histogram(c, Path.of(histograms));
                        for (StageChild c : aggregate) histogram(c, Path.of(histograms));
                    }
                    rss[0] = decode.stream().mapToLong(StageChild::rssBytes).sum();
                    rss[1] = aggregate.stream().mapToLong(StageChild::rssBytes).sum();
                    Map<String, Long> pids = new java.util.LinkedHashMap<>();
                    pids.put("bench", ProcessHandle.current().pid());
                    for (StageChild c : decode) pids.put(c.name(), c.process().pid());
                    for (StageChild c : aggregate) pids.put(c.name(), c.process().pid());
                    pids.put("ingest", ingestPid);
                    threadCpu = ThreadCpu.busiestThreads(pids, 10_000);
                    QueryLoad.Figures f = QueryLoad.ask(URI.create("http://127.0.0.1:" + aggregate.get(0).httpPort()
                            + "/api/threads?top=25&by=readyP99Nanos&window=latest"), 1, 200);
                    api[0] = f.p50Ms();
                    api[1] = f.p99Ms();
                } catch (Exception e) {
                    err.println("bench: the mid-run measurement failed: " + e);
                }
            }, "fleet-bench-mid");
            mid.setDaemon(true);
            mid.start();
            long buffers = replay(files, watched, replayStart);
            double replaySecs = (System.nanoTime() - replayStart) / 1e9;
            sampling.set(false);
            lags = lagSummary(lagSamples);
            double firstWindowEnd = (WINDOW_NANOS - Math.floorMod(startEpochNanos, WINDOW_NANOS)) / 1e9;
            SteadyCost steady = SteadyCost.of(lagSamples, firstWindowEnd, replaySecs);
            // -Dswapstream.fleet.series=FILE: each second's sample, to see what a window's end does to the stages
            String series = System.getProperty("swapstream.fleet.series");
            if (series != null) writeSeries(Path.of(series), lagSamples, firstWindowEnd);
            mid.join();
            err.printf("bench: replay done in %.1f s (%d buffers)%n", replaySecs, buffers);
            err.flush();

            // every session's rows against offline
            Map<String, ThreadStats> expected = new HashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(2);
            List<Future<Map<String, ThreadStats>>> parts = new ArrayList<>();
            for (Path f : files) parts.add(pool.submit(() -> offline(f)));
            for (Future<Map<String, ThreadStats>> p : parts) expected.putAll(p.get());
            pool.shutdown();
            while (rows.finals.size() < expected.size()) {
                if (System.nanoTime() > deadline) break;
                for (StageChild c : decode) if (!c.process().isAlive()) throw new ServiceException("decode ended: " + Files.readString(c.log()));
                for (StageChild c : aggregate) if (!c.process().isAlive()) throw new ServiceException("aggregate ended: " + Files.readString(c.log()));
                Thread.sleep(200);
            }
            double drainSecs = (System.nanoTime() - replayStart) / 1e9 - replaySecs;
            rows.close();
            int differing = 0;
            int missing = 0;
            for (Map.Entry<String, ThreadStats> e : expected.entrySet()) {
                ThreadStats got = rows.finals.get(e.getKey());
                if (got == null) missing++;
                else if (!got.equals(e.getValue())) {
                    if (differing++ < 3) err.printf("bench: row %s differs from offline in %s%n", e.getKey(), BenchMeasures.differences(got, e.getValue()));
                }
            }
            // how long after each window's end its first final row came, leaving out each session's last (closed by its end)
            List<Double> lags = new ArrayList<>();
            Map<Long, List<Double>> lagsByEnd = new java.util.TreeMap<>();
            Map<String, Long> last = new HashMap<>();
            rows.firstFinalAt.keySet().forEach(k -> last.merge(k.substring(0, k.lastIndexOf('/')), Long.parseLong(k.substring(k.lastIndexOf('/') + 1)), Math::max));
            for (Map.Entry<String, Long> e : rows.firstFinalAt.entrySet()) {
                String k = e.getKey();
                long windowStart = Long.parseLong(k.substring(k.lastIndexOf('/') + 1));
                if (windowStart == last.get(k.substring(0, k.lastIndexOf('/')))) continue;
                double endWallMs = replayWall + (windowStart + WINDOW_NANOS - startEpochNanos) / 1e6;
                double lag = (e.getValue() - endWallMs) / 1000;
                lags.add(lag);
                lagsByEnd.computeIfAbsent(windowStart + WINDOW_NANOS, x -> new ArrayList<>()).add(lag);
            }
            lags.sort(null);
            List<WindowEndLag> byEnd = new ArrayList<>();
            lagsByEnd.forEach((end, l) -> {
                l.sort(null);
                byEnd.add(new WindowEndLag((end - startEpochNanos) / 1e9, l.size(), BenchMeasures.quantile(l, 0.5), BenchMeasures.quantile(l, 0.99)));
            });
            double ingestCpu = ingest.cpuSecs();
            long outOfOrder = 0;
            for (StageChild c : decode) {
                String m = c.metrics();
                outOfOrder += (long) StageChild.sum(m, "swapstream_switches_out_of_order_total");
                switches += (long) StageChild.sum(m, "swapstream_switches_out_total"); // every switch, a processor's idle thread's too
            }
            return new Result(hosts, instances, switches, buffers, replaySecs, drainSecs, switches / (replaySecs + drainSecs),
                    midDecode, midAggregate, rss[0], rss[1],
                    perSession(midDecode, decodeBase), perSession(midAggregate, aggregateBase),
                    BenchMeasures.quantile(lags, 0.5), BenchMeasures.quantile(lags, 0.99), lags.size(), ingestCpu * 1000 / Math.max(1, buffers),
                    decode.stream().mapToDouble(StageChild::cpuSecs).sum() - decodeCpuBefore,
                    aggregate.stream().mapToDouble(StageChild::cpuSecs).sum() - aggregateCpuBefore,
                    byEnd, api[0], api[1], expected.size(), differing, missing, outOfOrder, steady,
                    new OfflineCost(offlineSwitches.get(), offlineDecodeNanos.get(), offlineAllNanos.get()));
        } finally {
            for (StageChild c : decode) c.close();
            for (StageChild c : aggregate) c.close();
            if (ingest != null) ingest.close();
        }
    }

    /** The live objects of a stage by class (jmap -histo:live), for finding what each session costs. */
    private void histogram(StageChild c, Path dir) throws Exception {
        Files.createDirectories(dir);
        new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jmap").toString(), "-histo:live", String.valueOf(c.process().pid()))
                .redirectErrorStream(true).redirectOutput(dir.resolve(c.name() + "-" + hosts + ".histo").toFile()).start().waitFor();
    }

    private double perSession(long[] mid, long[] base) {
        return (double) (Arrays.stream(mid).sum() - Arrays.stream(base).sum()) / hosts;
    }

    private static long[] heaps(List<StageChild> stages) throws Exception {
        long[] h = new long[stages.size()];
        for (int i = 0; i < h.length; i++) h[i] = stages.get(i).heapAfterGc();
        return h;
    }

    private List<Path> generate(Path dir, long startFileTime) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<Path>> made = new ArrayList<>();
        // about 240 switches a second in this shape (2 processors, one busy thread): more than the run writes
        long each = 300L * seconds;
        for (int i = 0; i < hosts; i++) {
            int n = i;
            made.add(pool.submit(() -> {
                GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withShape(2, 1, 1).withSwitches(each).withSeed(1000 + n)
                        .withBufferSize(16 * 1024).withFlushTimer(FLUSH_TICKS).withStartTime(startFileTime);
                Path f = dir.resolve(String.format("host%05d.etl", n));
                TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
                return f;
            }));
        }
        List<Path> files = new ArrayList<>();
        for (Future<Path> f : made) files.add(f.get());
        pool.shutdown();
        return files;
    }

    /** Writes every host's buffers into the watched folder when due, for {@code seconds}; the buffers written. */
    private long replay(List<Path> files, Path watched, long start) throws Exception {
        long end = start + seconds * 1_000_000_000L;
        PriorityQueue<HostWriting> queue = new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));
        for (Path f : files) {
            HostWriting w = new HostWriting(f, watched.resolve(f.getFileName()));
            if (w.advance(start, end)) queue.add(w);
            else w.stop();
        }
        long written = 0;
        while (!queue.isEmpty()) {
            HostWriting w = queue.poll();
            long wait = w.dueNanos - System.nanoTime();
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            w.append();
            written++;
            if (w.advance(start, end)) queue.add(w);
            else w.stop();
        }
        return written;
    }

    /** The rows the stages should give for the part of {@code f} the replay wrote (the buffers due within the run). */
    private Map<String, ThreadStats> offline(Path f) throws Exception {
        Path part = Files.createDirectories(work.resolve("written")).resolve(f.getFileName());
        HostWriting w = new HostWriting(f, part);
        try {
            while (w.advance(0, seconds * 1_000_000_000L)) w.append();
        } finally {
            w.stop();
        }
        String host = f.getFileName().toString().replace(".etl", "");
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long[] n = {0};
        long c0 = mx.getCurrentThreadCpuTime();
        SessionDecoder.decodeBatches(part, host, null, b -> n[0] += b.count(), null);
        long c1 = mx.getCurrentThreadCpuTime();
        Map<String, ThreadStats> rows = OfflineRows.of(part, host, WINDOW_NANOS);
        long c2 = mx.getCurrentThreadCpuTime();
        offlineSwitches.addAndGet(n[0]);
        offlineDecodeNanos.addAndGet(c1 - c0);
        offlineAllNanos.addAndGet(c2 - c1);
        return rows;
    }

}
