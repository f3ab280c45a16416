package io.swapstream.cli;

import io.swapstream.aggregate.StatsTable;
import io.swapstream.aggregate.rollup.RollupTable;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.KafkaReachability;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Directories;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.Pipeline;
import io.swapstream.local.RollupRun;
import io.swapstream.local.StageConfig;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.streams.KafkaStreams;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "run", description = "The whole pipeline: an in-JVM Kafka broker (unless --bootstrap-servers), ingest, decode,"
        + " aggregate; prints the top threads by p99 wait. With no file it runs on a generated demo trace.")
final class RunCommand implements Callable<Integer> {
    enum Format { table, jsonl }

    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Parameters(arity = "0..*", paramLabel = "FILE.etl", description = "the traces; none: a generated demo trace",
            showDefaultValue = picocli.CommandLine.Help.Visibility.NEVER)
    List<Path> files = new ArrayList<>();

    @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT", description = "${COMPLETION-CANDIDATES}") Format format;
    @Option(names = "--out", paramLabel = "FILE", description = "write the statistics here instead of standard output") Path out;
    @Option(names = "--top", paramLabel = "N", description = "only the N rows with the highest p99 wait (with --window, N per window); default: 20 in a table, all in jsonl")
    Integer top;
    @Option(names = "--host", paramLabel = "HOST", description = "host of the traces; default: each file's name without extension") String host;
    @Option(names = "--window", paramLabel = "DURATION", converter = Durations.Window.class,
            description = "print per-window rows of this tumbling window (as stats --window); without it (or 0s), whole-session rows")
    Duration window;
    @Option(names = "--timeout", defaultValue = "600s", paramLabel = "DURATION", description = "give up waiting for the pipeline after this long")
    Duration timeout;
    @Option(names = "--demo-switches", defaultValue = "200000", paramLabel = "N", description = "size of the generated demo trace")
    long demoSwitches;

    /**
     * The aggregate's window on a broker given by --bootstrap-servers when --window is not: other
     * consumers of its topics may want windowed rows (etw.thread-stats, docs/architecture.md). On the
     * temporary broker nothing but this command reads them, so without --window it computes the
     * whole-session rows alone, as {@code stats} does.
     */
    static final long DEFAULT_WINDOW_NANOS = 60_000_000_000L;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        // every value is checked before a broker starts
        Options.traceFiles(files);
        for (Path f : files) BufferPublisher.sessionOf(f, Options.host(host, f)); // an ETL file, with a logfile header
        long windowNanos = window == null ? 0 : window.toNanos();
        long timeoutMs = timeout.toMillis();
        if (top != null) Options.atLeast("--top", top, 1);
        Options.atLeast("--demo-switches", demoSwitches, 1);
        if (out != null) Options.outputFile("--out", out);
        kafka.validate(false);
        Path work = Files.createTempDirectory("swapstream-run-");
        preloadRocksDb();
        EmbeddedKafkaBroker broker = null;
        try {
            String bootstrap = kafka.bootstrapOrNull();
            long t0 = System.nanoTime();
            if (bootstrap != null) {
                KafkaReachability.await(bootstrap, kafka.connectTimeoutMs(), kafka.clientConfig(), kafka::notice);
            } else {
                broker = EmbeddedKafkaBroker.start();
                bootstrap = broker.bootstrapServers();
                err.printf("started an in-JVM Kafka broker on %s in %.1f s%n", bootstrap, (System.nanoTime() - t0) / 1e9);
            }
            if (files.isEmpty()) {
                Path demo = work.resolve("demo.etl");
                GeneratorOptions o = GeneratorOptions.defaults().withSwitches(demoSwitches).withShape(8, 12, 8);
                long n = TraceGenerator.generate(demo, o, MaximumWaitReason.forBuild(o.build()));
                err.printf("generated a demo trace: %d context switches on %d processors%n", n, o.processors());
                files = List.of(demo);
                if (host == null) host = "demo-host";
            }
            int partitions;
            short replication;
            String appId = "swapstream-run-" + UUID.randomUUID().toString().substring(0, 8);
            try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
                KafkaFuture<Void> coordinators = Pipeline.findCoordinators(admin, appId);
                replication = kafka.replication(admin);
                // before any topic: a registry's refusal leaves nothing behind
                StageConfig.registerSchemas(kafka.clientConfig(), kafka.prefix);
                partitions = TopicSetup.ensure(admin, kafka.prefix, topicPartitions(broker != null), replication);
                Pipeline.awaitCoordinators(coordinators);
            }
            try (Pipeline pipeline = Pipeline.start(bootstrap, appId, work.resolve("state"), kafka.prefix, partitions,
                    replication, aggregateWindow(windowNanos, broker != null), SwapstreamConfig.DEFAULT_AGGREGATE_EMIT_INTERVAL_MS,
                    kafka.clientConfigStrings());
                 // with windows, the fleet roll-ups too: per process name across the files, each window
                 RollupRun rollup = windowNanos > 0 && format == Format.table ? RollupRun.start(bootstrap, appId, work.resolve("state").resolve("rollup"), kafka.prefix,
                         partitions, replication, kafka.clientConfigStrings(), System.nanoTime() + timeoutMs * 1_000_000L) : null) {
                long t1 = System.nanoTime();
                IngestCommand.Outcome outcome = IngestCommand.publish(spec, bootstrap, kafka.prefix, files, host, null,
                        kafka.bootstrapOrNull() != null, kafka.clientConfig());
                List<BufferPublisher.Published> published = outcome.published();
                if (published.isEmpty()) return outcome.status();
                double ingested = (System.nanoTime() - t1) / 1e9;
                long deadline = t1 + timeoutMs * 1_000_000L;
                for (BufferPublisher.Published p : published) pipeline.awaitDecoded(p.session(), deadline);
                double decoded = (System.nanoTime() - t1) / 1e9;
                long switches = 0;
                for (BufferPublisher.Published p : published) switches += pipeline.awaitAggregated(p.session(), deadline);
                double secs = (System.nanoTime() - t1) / 1e9;
                err.printf("ingested in %.1f s, decoded by %.1f s, aggregated by %.1f s: %d context switches, %.0f switches/s end to end%n",
                        ingested, decoded, secs, switches, switches / secs);
                List<ThreadStats> stats = new ArrayList<>();
                Map<String, List<ThreadStats>> windows = finalRows(bootstrap, published, pipeline.aggregate, timeoutMs, windowNanos > 0);
                int status = outcome.status();
                boolean incomplete = false;
                for (BufferPublisher.Published p : published) {
                    List<ThreadStats> rows = windows.getOrDefault(p.session(), List.of());
                    if (p.error() != null) {
                        // as stats refuses the file: its processors end at different places in what is left, and times
                        // past the earliest one's end would count the switches missing from the others (docs/operations.md)
                        err.println("swapstream: session " + p.session() + " is incomplete: its rows are not printed (its times past"
                                + " the earliest processor's last buffer would count switches that are missing)");
                        incomplete = true;
                        status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                        continue;
                    }
                    if (rows.isEmpty()) {
                        status = Math.max(status, Swapstream.EXIT_NO_SWITCHES);
                        err.println("swapstream: note: session " + p.session() + " holds no context switches: it has no CSwitch"
                                + " (0x0524) or compact-batch (0x0525) events; the kernel logger writes them only with the CSWITCH flag");
                    }
                    stats.addAll(rows);
                }
                write(stats, windowNanos > 0);
                // the per-process tables for people; JSON lines stay one ThreadStats record a line
                if (rollup != null && format == Format.table && incomplete) {
                    err.println("swapstream: the per-process table is not printed: it would merge the incomplete sessions' rows");
                } else if (rollup != null && format == Format.table) {
                    List<ThreadStats> windowRows = new ArrayList<>();
                    windows.values().forEach(windowRows::addAll);
                    writeProcesses(rollup.processRows(windowRows, t1 + timeoutMs * 1_000_000L));
                }
                return status;
            }
        } finally {
            if (broker != null) broker.close();
            Directories.deleteTree(work);
        }
    }

    /**
     * The partitions of the topics this creates: --partitions when given, else its default, except on the temporary
     * broker. There one stream thread a stage takes every partition, so more partitions run nothing side by side;
     * each is a task to start (a RocksDB store and a changelog restored) before the stage runs.
     */
    private int topicPartitions(boolean temporaryBroker) {
        return temporaryBroker && !spec.commandLine().getParseResult().hasMatchedOption("--partitions") ? 1 : kafka.partitions;
    }

    /**
     * Loads RocksDB's native library on a thread of its own while the broker starts: the first store a stage opens
     * otherwise does it on the stage's thread (unpacking it from its jar after a shell probe for musl). A failure is
     * left to the stage, which reports it.
     */
    private static void preloadRocksDb() {
        Thread t = new Thread(() -> {
            try {
                org.rocksdb.RocksDB.loadLibrary();
            } catch (Throwable e) {
                // the stage's own load fails the same way and says so
            }
        }, "swapstream-load-rocksdb");
        t.setDaemon(true);
        t.start();
    }

    static long aggregateWindow(long windowNanos, boolean temporaryBroker) {
        if (windowNanos > 0) return windowNanos;
        return temporaryBroker ? 0 : DEFAULT_WINDOW_NANOS;
    }

    /**
     * The sessions' final rows, read from the thread-stats topic (the store keeps only the latest
     * windows, and no sketches): every window's with {@code windows}, else the whole-session ones, up
     * to the final whole-session rows, which commit in the same transaction as the last windows.
     */
    private Map<String, List<ThreadStats>> finalRows(String bootstrap, List<BufferPublisher.Published> published,
                                                     KafkaStreams aggregate, long timeoutMs, boolean windows) {
        Map<String, Integer> wholeRowsDue = new HashMap<>();
        for (BufferPublisher.Published p : published) wholeRowsDue.put(p.session(), Pipeline.wholeSessionRows(aggregate, p.session()));
        Map<String, Object> c = new HashMap<>(kafka.clientConfig());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Map<String, List<ThreadStats>> rows = new HashMap<>();
        Pipeline.readFinalRows(c, kafka.prefix, wholeRowsDue, aggregate, System.nanoTime() + timeoutMs * 1_000_000L, (t, whole) -> {
            if (whole != windows) rows.computeIfAbsent(t.getSession().toString(), k -> new ArrayList<>()).add(t);
        });
        rows.values().forEach(l -> l.sort(Comparator.comparingInt(ThreadStats::getThreadId).thenComparingLong(ThreadStats::getWindowStartNanos)));
        return rows;
    }

    /** Each window's top processes across the files, after the threads' table. */
    private void writeProcesses(List<io.swapstream.schemas.avro.ProcessStats> rows) throws IOException {
        PrintWriter w = out == null ? spec.commandLine().getOut()
                : new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND));
        try {
            java.util.TreeMap<Long, List<io.swapstream.schemas.avro.ProcessStats>> byWindow = new java.util.TreeMap<>();
            for (var p : rows) byWindow.computeIfAbsent(p.getWindowStartNanos(), k -> new ArrayList<>()).add(p);
            for (var e : byWindow.entrySet()) {
                List<io.swapstream.schemas.avro.ProcessStats> ranked = RollupTable.ranked(e.getValue(), "readyP99Nanos", top != null ? top : 10);
                w.println();
                w.println("processes across the files, window " + java.time.Instant.ofEpochSecond(0, e.getKey()) + ", by ready p99:");
                RollupTable.writeProcesses(w, ranked, false);
            }
        } finally {
            w.flush();
            if (out != null) w.close();
        }
    }

    private void write(List<ThreadStats> stats, boolean windowed) throws IOException {
        Integer n = top != null ? top : (format == Format.table ? Integer.valueOf(20) : null);
        List<ThreadStats> rows;
        if (n == null && format != Format.table) {
            rows = stats;
        } else if (windowed) {
            // --top N: N per window, windows in time order
            java.util.TreeMap<Long, List<ThreadStats>> byWindow = new java.util.TreeMap<>();
            for (ThreadStats t : stats) byWindow.computeIfAbsent(t.getWindowStartNanos(), k -> new ArrayList<>()).add(t);
            rows = new ArrayList<>();
            for (List<ThreadStats> w : byWindow.values()) rows.addAll(StatsTable.ranked(w, "waitP99Nanos", n));
        } else {
            rows = StatsTable.ranked(stats, "waitP99Nanos", n);
        }
        PrintWriter w = out == null ? spec.commandLine().getOut()
                : new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8));
        try {
            StatsTable.write(w, rows, format == Format.jsonl, windowed);
        } finally {
            w.flush();
            if (out != null) w.close();
        }
    }
}
