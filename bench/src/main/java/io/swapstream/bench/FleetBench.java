package io.swapstream.bench;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.PacedBuffers;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.OfflineRows;
import io.swapstream.local.ServiceException;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

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

    /** A swapstream command in a JVM of its own, its output in a log. */
    record Child(String name, Process process, Path log, int httpPort) implements AutoCloseable {
        static Child start(Path work, String name, int httpPort, String heap, String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), heap));
            // -Dswapstream.fleet.jfr=DIR: a flight recording of each process, to see where time goes as N grows
            String jfr = System.getProperty("swapstream.fleet.jfr");
            if (jfr != null) cmd.add("-XX:StartFlightRecording=filename=" + Path.of(jfr, name + ".jfr") + ",settings=profile,dumponexit=true");
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), SWAPSTREAM_MAIN));
            cmd.addAll(List.of(args));
            Path log = work.resolve(name + ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new Child(name, p, log, httpPort);
        }

        double cpuSecs() {
            return process.toHandle().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
        }

        long rssBytes() {
            try {
                for (String l : Files.readAllLines(Path.of("/proc", String.valueOf(process.pid()), "status"))) {
                    if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
                }
            } catch (IOException e) {
                // gone
            }
            return -1;
        }

        /** Heap in use after a full GC (jcmd GC.run), from the stage's own metrics. */
        long heapAfterGc() throws Exception {
            new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), String.valueOf(process.pid()), "GC.run")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
            return (long) sum(metrics(), "jvm_memory_used_bytes{area=\"heap\"");
        }

        /** The stage's /metrics text, scraped once: {@link #sum} reads as many metrics from it as wanted. */
        String metrics() throws Exception {
            return http("/metrics");
        }

        /** The sum of the samples whose line starts with {@code start}, in a /metrics text. */
        static double sum(String metrics, String start) {
            double sum = 0;
            for (String l : metrics.split("\n")) {
                if (l.startsWith(start)) sum += Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            }
            return sum;
        }

        String http(String path) throws Exception {
            HttpRequest q = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).timeout(Duration.ofSeconds(30)).build();
            return HttpClient.newHttpClient().send(q, HttpResponse.BodyHandlers.ofString()).body();
        }

        void awaitLog(String text, long deadlineNanos) throws Exception {
            while (!Files.readString(log).contains(text)) {
                if (!process.isAlive()) throw new ServiceException(name + " ended: " + Files.readString(log).strip());
                if (System.nanoTime() > deadlineNanos) throw new ServiceException(name + " did not say '" + text + "' in time");
                Thread.sleep(100);
            }
        }

        @Override
        public void close() throws Exception {
            process.destroy(); // SIGTERM: the stage commits and leaves its group
            if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly();
        }
    }

    /** The busiest threads of the run's processes over the mid-run interval: CPU share of one core, by process and thread name. */
    public volatile String threadCpu = "";

    /** Per thread (process: name), the share of a core each used over {@code ms}, busiest first, from /proc. */
    static String busiestThreads(Map<String, Long> pids, long ms) throws Exception {
        Map<String, Long> before = threadTicks(pids);
        Thread.sleep(ms);
        Map<String, Long> after = threadTicks(pids);
        Map<String, Double> share = new HashMap<>();
        after.forEach((k, v) -> share.merge(k.substring(0, k.lastIndexOf('#')), (v - before.getOrDefault(k, 0L)) / (ms / 10.0), Double::sum));
        StringBuilder b = new StringBuilder();
        share.entrySet().stream().sorted((x, y) -> Double.compare(y.getValue(), x.getValue())).limit(14)
                .forEach(e -> b.append(String.format("  %5.1f%%  %s%n", 100 * e.getValue(), e.getKey())));
        return b.toString();
    }

    /** utime + stime (clock ticks, 100 a second) of every thread, keyed "process: thread name#tid". */
    private static Map<String, Long> threadTicks(Map<String, Long> pids) {
        Map<String, Long> out = new HashMap<>();
        pids.forEach((name, pid) -> {
            try (var tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
                tasks.forEach(t -> {
                    try {
                        String stat = Files.readString(t.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        String comm = Files.readString(t.resolve("comm")).strip().replaceAll("-?[0-9]+$", "");
                        out.put(name + ": " + comm + "#" + t.getFileName(), Long.parseLong(f[11]) + Long.parseLong(f[12]));
                    } catch (IOException | RuntimeException e) {
                        // the thread ended
                    }
                });
            } catch (IOException e) {
                // the process ended
            }
        });
        return out;
    }

    /** The stages' own lag during the replay: p50 and max of each, sampled each second. */
    public volatile String lags = "";

    static String lagSummary(List<double[]> samples) {
        if (samples.isEmpty()) return "";
        String[] names = {"decode event lag s (the most a session's merge holds back)", "aggregate event lag s (newest switch taken"
                + " minus the end of the newest window closed)", "decode input lag records", "aggregate input lag records"};
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < names.length; k++) {
            int i = k;
            double[] v = samples.stream().mapToDouble(x -> x[i]).sorted().toArray();
            b.append(String.format("  %s: p50 %.1f, p99 %.1f, max %.1f%n", names[k], v[v.length / 2],
                    v[Math.max(0, (int) Math.ceil(v.length * 0.99) - 1)], v[v.length - 1]));
        }
        return b.toString();
    }

    /** What a run measured. */
    public record Result(int hosts, int instances, long switches, long buffers, double replaySecs, double drainSecs, double switchesPerSec,
                  long[] decodeHeap, long[] aggregateHeap, long decodeRss, long aggregateRss, double decodeBytesPerSession,
                  double aggregateBytesPerSession, double latencyP50, double latencyP99, int windows, double ingestCpuMsPerBuffer,
                  double decodeCpu, double aggregateCpu, double apiP50Ms, double apiP99Ms, int rows, int rowsDiffering, int rowsMissing,
                  long switchesOutOfOrder, OfflineCost offline) {
        /** The stages' CPU a switch over the replay and the drain, beside the offline code's for the same switches. */
        public double decodeMicrosPerSwitch() {
            return decodeCpu / switches * 1e6;
        }

        public double aggregateMicrosPerSwitch() {
            return aggregateCpu / switches * 1e6;
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

        List<Child> decode = new ArrayList<>();
        List<Child> aggregate = new ArrayList<>();
        Child ingest = null;
        try {
            for (int i = 0; i < instances; i++) {
                int d = EmbeddedKafkaBroker.freePort();
                decode.add(Child.start(work, "decode-" + i, d, "-Xmx2g", "decode", "-b", bootstrap, "--topic-prefix", prefix,
                        "--partitions", String.valueOf(partitions), "--state-dir", work.resolve("decode-" + i).toString(),
                        "--http", "127.0.0.1:" + d, "--application-id", app, "--instance-id", "d" + i));
                int a = EmbeddedKafkaBroker.freePort();
                aggregate.add(Child.start(work, "aggregate-" + i, a, "-Xmx2g", "aggregate", "-b", bootstrap, "--topic-prefix", prefix,
                        "--partitions", String.valueOf(partitions), "--state-dir", work.resolve("aggregate-" + i).toString(),
                        "--http", "127.0.0.1:" + a, "--application-id", app, "--instance-id", "a" + i, "--window", "60s"));
            }
            for (Child c : decode) c.awaitLog(": running", deadline);
            for (Child c : aggregate) c.awaitLog(": running", deadline);
            ingest = Child.start(work, "ingest", 0, "-Xmx1g", "ingest", "--watch", watched.toString(), "-b", bootstrap,
                    "--topic-prefix", prefix, "--host-from-file-name", "--flush-timer", "1s", "--quiet", "10s", "--poll", "250ms");
            long ingestPid = ingest.process().pid();
            ingest.awaitLog("watching", deadline);
            long[] decodeBase = heaps(decode);
            long[] aggregateBase = heaps(aggregate);
            err.printf("bench: %d hosts, stages running; heap after GC: decode %s MiB, aggregate %s MiB%n", hosts, mib(decodeBase),
                    mib(aggregateBase));
            err.flush();

            FinalRows rows = new FinalRows(bootstrap, prefix);
            // the stages' CPU from here: their start, and the heap measured before, left out
            double decodeCpuBefore = decode.stream().mapToDouble(Child::cpuSecs).sum();
            double aggregateCpuBefore = aggregate.stream().mapToDouble(Child::cpuSecs).sum();
            long replayStart = System.nanoTime();
            long replayWall = System.currentTimeMillis();
            rows.start();
            // each second, how far behind each stage says it is, to see where a late window's time goes
            List<double[]> lagSamples = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    try {
                        double d = 0;
                        double a = 0;
                        double dr = 0;
                        double ar = 0;
                        for (Child c : decode) {
                            String m = c.metrics();
                            d = Math.max(d, Child.sum(m, "swapstream_event_lag_seconds"));
                            dr += Child.sum(m, "swapstream_lag_records");
                        }
                        for (Child c : aggregate) {
                            String m = c.metrics();
                            a = Math.max(a, Child.sum(m, "swapstream_event_lag_seconds"));
                            ar += Child.sum(m, "swapstream_lag_records");
                        }
                        lagSamples.add(new double[] {d, a, dr, ar});
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
                        for (Child c : decode) histogram(c, Path.of(histograms));
                        for (Child c : aggregate) histogram(c, Path.of(histograms));
                    }
                    rss[0] = decode.stream().mapToLong(Child::rssBytes).sum();
                    rss[1] = aggregate.stream().mapToLong(Child::rssBytes).sum();
                    Map<String, Long> pids = new java.util.LinkedHashMap<>();
                    pids.put("bench", ProcessHandle.current().pid());
                    for (Child c : decode) pids.put(c.name(), c.process().pid());
                    for (Child c : aggregate) pids.put(c.name(), c.process().pid());
                    pids.put("ingest", ingestPid);
                    threadCpu = busiestThreads(pids, 10_000);
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
                for (Child c : decode) if (!c.process().isAlive()) throw new ServiceException("decode ended: " + Files.readString(c.log()));
                for (Child c : aggregate) if (!c.process().isAlive()) throw new ServiceException("aggregate ended: " + Files.readString(c.log()));
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
                    if (differing++ < 3) err.printf("bench: row %s differs from offline in %s%n", e.getKey(), differences(got, e.getValue()));
                }
            }
            // how long after each window's end its first final row came, leaving out each session's last (closed by its end)
            List<Double> lags = new ArrayList<>();
            Map<String, Long> last = new HashMap<>();
            rows.firstFinalAt.keySet().forEach(k -> last.merge(k.substring(0, k.lastIndexOf('/')), Long.parseLong(k.substring(k.lastIndexOf('/') + 1)), Math::max));
            for (Map.Entry<String, Long> e : rows.firstFinalAt.entrySet()) {
                String k = e.getKey();
                long windowStart = Long.parseLong(k.substring(k.lastIndexOf('/') + 1));
                if (windowStart == last.get(k.substring(0, k.lastIndexOf('/')))) continue;
                double endWallMs = replayWall + (windowStart + WINDOW_NANOS - startEpochNanos) / 1e6;
                lags.add((e.getValue() - endWallMs) / 1000);
            }
            lags.sort(null);
            double ingestCpu = ingest.cpuSecs();
            long outOfOrder = 0;
            for (Child c : decode) {
                String m = c.metrics();
                outOfOrder += (long) Child.sum(m, "swapstream_switches_out_of_order_total");
                switches += (long) Child.sum(m, "swapstream_switches_out_total"); // every switch, a processor's idle thread's too
            }
            return new Result(hosts, instances, switches, buffers, replaySecs, drainSecs, switches / (replaySecs + drainSecs),
                    midDecode, midAggregate, rss[0], rss[1],
                    perSession(midDecode, decodeBase), perSession(midAggregate, aggregateBase),
                    quantile(lags, 0.5), quantile(lags, 0.99), lags.size(), ingestCpu * 1000 / Math.max(1, buffers),
                    decode.stream().mapToDouble(Child::cpuSecs).sum() - decodeCpuBefore,
                    aggregate.stream().mapToDouble(Child::cpuSecs).sum() - aggregateCpuBefore,
                    api[0], api[1], expected.size(), differing, missing, outOfOrder,
                    new OfflineCost(offlineSwitches.get(), offlineDecodeNanos.get(), offlineAllNanos.get()));
        } finally {
            for (Child c : decode) c.close();
            for (Child c : aggregate) c.close();
            if (ingest != null) ingest.close();
        }
    }

    /** The live objects of a stage by class (jmap -histo:live), for finding what each session costs. */
    private void histogram(Child c, Path dir) throws Exception {
        Files.createDirectories(dir);
        new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jmap").toString(), "-histo:live", String.valueOf(c.process().pid()))
                .redirectErrorStream(true).redirectOutput(dir.resolve(c.name() + "-" + hosts + ".histo").toFile()).start().waitFor();
    }

    /** The fields two rows differ in, with both values. */
    static String differences(ThreadStats got, ThreadStats want) {
        List<String> out = new ArrayList<>();
        for (org.apache.avro.Schema.Field f : ThreadStats.getClassSchema().getFields()) {
            Object a = got.get(f.pos());
            Object b = want.get(f.pos());
            if (!java.util.Objects.equals(a, b)) out.add(f.name() + " " + a + " (offline " + b + ")");
        }
        return String.join("; ", out);
    }

    private double perSession(long[] mid, long[] base) {
        return (double) (Arrays.stream(mid).sum() - Arrays.stream(base).sum()) / hosts;
    }

    private static long[] heaps(List<Child> stages) throws Exception {
        long[] h = new long[stages.size()];
        for (int i = 0; i < h.length; i++) h[i] = stages.get(i).heapAfterGc();
        return h;
    }

    public static String mib(long[] bytes) {
        StringBuilder b = new StringBuilder();
        for (long x : bytes) b.append(b.length() == 0 ? "" : " + ").append(String.format("%.0f", x / 1048576.0));
        return b.toString();
    }

    static double quantile(List<Double> sorted, double q) {
        if (sorted.isEmpty()) return Double.NaN;
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
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

    /** One host's trace being written: its next buffer and when it is due. */
    private static final class Writing {
        final PacedBuffers buffers;
        final Path target;
        long dueNanos;
        byte[] next;

        Writing(Path source, Path target) throws IOException {
            this.buffers = PacedBuffers.open(source);
            this.target = target;
        }

        /** Reads the next buffer due by {@code endNanos}; false when there is none. */
        boolean advance(long start, long endNanos) throws IOException {
            if (!buffers.next()) return false;
            dueNanos = start + buffers.writtenAtNanos();
            if (dueNanos > endNanos) return false;
            next = Arrays.copyOf(buffers.rawBytes(), buffers.rawLength());
            return true;
        }

        void append() throws IOException {
            try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                ByteBuffer b = ByteBuffer.wrap(next);
                while (b.hasRemaining()) out.write(b);
            }
        }
    }

    /** Writes every host's buffers into the watched folder when due, for {@code seconds}; the buffers written. */
    private long replay(List<Path> files, Path watched, long start) throws Exception {
        long end = start + seconds * 1_000_000_000L;
        PriorityQueue<Writing> queue = new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));
        for (Path f : files) {
            Writing w = new Writing(f, watched.resolve(f.getFileName()));
            if (w.advance(start, end)) queue.add(w);
        }
        long written = 0;
        while (!queue.isEmpty()) {
            Writing w = queue.poll();
            long wait = w.dueNanos - System.nanoTime();
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            w.append();
            written++;
            if (w.advance(start, end)) queue.add(w);
            else w.buffers.close();
        }
        return written;
    }

    /** The rows the stages should give for the part of {@code f} the replay wrote (the buffers due within the run). */
    private Map<String, ThreadStats> offline(Path f) throws Exception {
        Path part = Files.createDirectories(work.resolve("written")).resolve(f.getFileName());
        Writing w = new Writing(f, part);
        try {
            while (w.advance(0, seconds * 1_000_000_000L)) w.append();
        } finally {
            w.buffers.close();
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

    /** The thread-stats topic read committed as it is written: final rows by key, and when each window's first came. */
    private static final class FinalRows implements AutoCloseable {
        final Map<String, ThreadStats> finals = new ConcurrentHashMap<>();
        /** session/windowStart: wall ms of the window's first final row. */
        final Map<String, Long> firstFinalAt = new ConcurrentHashMap<>();
        private final Thread thread;
        private volatile boolean closed;

        FinalRows(String bootstrap, String prefix) {
            Map<String, Object> config = BenchMeasures.consumerConfig(bootstrap);
            config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            config.put(ConsumerConfig.GROUP_ID_CONFIG, "fleet-bench-" + UUID.randomUUID());
            SingleObjectAvroSerde<ThreadStats> serde = new SingleObjectAvroSerde<>(ThreadStats.class);
            String topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.THREAD_STATS);
            thread = new Thread(() -> {
                try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(List.of(topic));
                    while (!closed) {
                        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                            if (r.value() == null) continue;
                            ThreadStats t = serde.deserialize(topic, r.value());
                            if (!t.getFinal$()) continue;
                            finals.put(r.key(), t);
                            if (r.key().split("/").length == 3) { // a window's row, not the whole session's
                                firstFinalAt.putIfAbsent(t.getSession() + "/" + t.getWindowStartNanos(), System.currentTimeMillis());
                            }
                        }
                    }
                }
            }, "fleet-bench-rows");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            thread.join();
        }
    }
}
