package io.swapstream.cli;

import io.swapstream.bench.BenchMeasures;
import io.swapstream.bench.CompressionTrial;
import io.swapstream.bench.FleetBench;
import io.swapstream.bench.PipelineRounds;
import io.swapstream.bench.QueryLoad;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Directories;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "bench", description = "Throughput side by side, in one run on this machine: offline decode and stats, the pipeline"
        + " end to end on an in-JVM broker, and Kafka's own producer and consumer ceiling for the same records and bytes.")
final class BenchCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "FILE.etl", description = "the trace; none: a generated 16-processor compact trace")
    Path file;

    @Option(names = "--switches", defaultValue = "4960000", paramLabel = "N", description = "switches of the generated trace")
    long switches;

    @Option(names = "--queries", description = "after the rounds, also ask the query API for the top 25 threads, from 1 and"
            + " from 32 clients at once: requests/s, median and 99th percentile")
    boolean queries;

    @Option(names = "--rounds", defaultValue = "2", paramLabel = "N",
            description = "measure everything N times in this JVM, the pipeline's rounds as one more session each through one running pipeline:"
                    + " the first round includes the JIT compiling the broker, the clients and the stages")
    int rounds;

    @Option(names = "--timeout", defaultValue = "900s", paramLabel = "DURATION", description = "give up on the pipeline after this long")
    Duration timeout;

    @Option(names = "--hosts", paramLabel = "N", description = "instead: N hosts' live sessions at once (growing files followed by"
            + " ingest --watch) through decode and aggregate processes, in real time for --seconds; memory, latency, throughput, rows")
    Integer hosts;

    @Option(names = "--seconds", defaultValue = "170", paramLabel = "S", description = "with --hosts: seconds of each host's trace, written in real time")
    int seconds;

    @Option(names = "--instances", defaultValue = "1", paramLabel = "K", description = "with --hosts: processes of each stage sharing its partitions")
    int instances;

    @Option(names = "--stage-config", paramLabel = "FILE", description = "with --hosts: Kafka client and Streams properties for the"
            + " decode and aggregate processes (their --client-config), to measure a setting such as commit.interval.ms")
    Path stageConfig;

    private int fleet() throws Exception {
        Options.atLeast("--hosts", hosts, 1);
        Options.atLeast("--seconds", seconds, 70); // a 60 s window closes within the run
        Options.atLeast("--instances", instances, 1);
        if (stageConfig != null && !Files.isReadable(stageConfig)) throw new UserInputException("--stage-config " + stageConfig + ": not a readable file");
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path work = Files.createTempDirectory("swapstream-fleet-");
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            FleetBench bench = new FleetBench(err, work, hosts, seconds, instances);
            bench.stageConfig = stageConfig == null ? null : stageConfig.toAbsolutePath();
            FleetBench.Result r = bench.run(broker.bootstrapServers());
            out.println("| hosts | stage instances | switches | switches/s | decode heap MiB | aggregate heap MiB | decode RSS MiB"
                    + " | aggregate RSS MiB | decode KiB/session | aggregate KiB/session | final window p50 / p99 s | ingest CPU ms/buffer"
                    + " | decode / aggregate CPU s | API top 25 p50 / p99 ms | rows equal offline |");
            out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|---|");
            out.printf("| %d | %d | %d | %.0f | %s | %s | %.0f | %.0f | %.1f | %.1f | %.1f / %.1f (%d windows) | %.3f | %.0f / %.0f | %.1f / %.1f"
                            + " | %s |%n", r.hosts(), r.instances(), r.switches(), r.switchesPerSec(), BenchMeasures.mib(r.decodeHeap()),
                    BenchMeasures.mib(r.aggregateHeap()), r.decodeRss() / 1048576.0, r.aggregateRss() / 1048576.0,
                    r.decodeBytesPerSession() / 1024, r.aggregateBytesPerSession() / 1024, r.latencyP50(), r.latencyP99(), r.windows(),
                    r.ingestCpuMsPerBuffer(), r.decodeCpu(), r.aggregateCpu(), r.apiP50Ms(), r.apiP99Ms(),
                    r.rowsDiffering() == 0 && r.rowsMissing() == 0 ? "yes, " + r.rows()
                            : "no: " + r.rowsMissing() + " missing, " + r.rowsDiffering() + " differ of " + r.rows());
            FleetBench.OfflineCost o = r.offline();
            out.printf("CPU a switch (µs): decode stage %.3f, offline decoding %.3f (%.1f×); aggregate stage %.3f, offline statistics %.3f"
                            + " (%.1f×); the stages' whole processes from the replay's start, the offline code on one thread (%d switches)%n",
                    r.decodeMicrosPerSwitch(), o.decodeMicrosPerSwitch(), r.decodeMicrosPerSwitch() / o.decodeMicrosPerSwitch(),
                    r.aggregateMicrosPerSwitch(), o.statisticsMicrosPerSwitch(), r.aggregateMicrosPerSwitch() / o.statisticsMicrosPerSwitch(),
                    o.switches());
            FleetBench.SteadyCost steady = r.steady();
            out.printf((Double.isNaN(steady.windowEndSecs()) ? "CPU a switch running (µs), from %2$.0f s into the replay to %3$.0f s (no whole window"
                            + " period after a window end 30 s in; --seconds 170 holds one)"
                            : "CPU a switch over one window period (µs), from %2$.0f s into the replay to %3$.0f s (15 s after the windows' end at %1$.1f s"
                            + " to 15 s after the next: that end's work and 60 s of switches)")
                            + ": decode stage %4$.3f (%5$.1f× offline, %6$.0f switches), aggregate stage %7$.3f (%8$.1f×, %9$.0f switches)%n",
                    steady.windowEndSecs(), steady.fromSecs(), steady.toSecs(), steady.decodeMicrosPerSwitch(),
                    steady.decodeMicrosPerSwitch() / o.decodeMicrosPerSwitch(),
                    steady.decodeSwitches(), steady.aggregateMicrosPerSwitch(), steady.aggregateMicrosPerSwitch() / o.statisticsMicrosPerSwitch(),
                    steady.aggregateSwitches());
            for (FleetBench.WindowEndLag l : r.latencyByWindowEnd()) {
                out.printf("final rows of the windows ending %.1f s into the replay: p50 %.1f s, p99 %.1f s after the end (%d windows)%n",
                        l.endSecs(), l.p50(), l.p99(), l.windows());
            }
            out.printf("replay %.1f s (%d buffers), then %.1f s until every final row; %d switches out of order (their buffers came"
                    + " later than the declared flush timer allows: such rows differ from offline, as the sessions say)%n", r.replaySecs(),
                    r.buffers(), r.drainSecs(), r.switchesOutOfOrder());
            out.printf("the busiest threads three quarters in, over 10 s (share of one core; 'bench' is this process: the broker,"
                    + " the writer of the files, the reader of the rows):%n%s", bench.threadCpu);
            out.printf("the stages' own lag during the replay, each second:%n%s", bench.lags);
            out.flush();
            return r.rowsDiffering() == 0 && r.rowsMissing() == 0 ? 0 : Swapstream.EXIT_FAILURE;
        } finally {
            Directories.deleteTree(work);
        }
    }

    @Override
    public Integer call() throws Exception {
        if (hosts != null) return fleet();
        if (file != null) Options.traceFiles(List.of(file));
        Options.atLeast("--switches", switches, 1);
        Options.atLeast("--rounds", rounds, 1);
        long timeoutMs = timeout.toMillis();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path work = Files.createTempDirectory("swapstream-bench-");
        try {
            Path trace = file;
            if (trace == null) {
                trace = work.resolve("bench.etl");
                GeneratorOptions o = GeneratorOptions.defaults().withShape(16, 40, 10).withSwitches(switches);
                TraceGenerator.generate(trace, o, MaximumWaitReason.forBuild(o.build()));
            }
            long bytes = Files.size(trace);
            err.printf("bench: %s, %.1f MiB%n", trace, bytes / 1048576.0);
            err.flush();
            // offline: the same code the stages run, on the file, in this thread
            List<PipelineRounds.Offline> offline = new java.util.ArrayList<>();
            for (int r = 0; r < rounds; r++) offline.add(PipelineRounds.offline(trace));
            err.printf("bench: offline done (%d switches)%n", offline.get(0).switches());
            err.flush();
            try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
                String bootstrap = broker.bootstrapServers();
                List<Pipeline.Times> runs = new java.util.ArrayList<>();
                String prefix = "bench" + UUID.randomUUID().toString().substring(0, 6) + ".";
                try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                    TopicSetup.ensure(admin, prefix, 4, (short) 1);
                }
                // one pipeline for all rounds, as a service runs: each round is one more session through it
                long started = System.nanoTime();
                double startSecs;
                List<QueryLoad.Figures> asked = List.of();
                int rowsIndexed = 0;
                String rollupFigures;
                Map<String, Double> cpuBefore = Map.of();
                Map<String, Double> cpuRounds = Map.of();
                Map<String, BenchMeasures.TopicBytes> topicBytes = Map.of();
                Map<String, List<CompressionTrial.Result>> codecs = new java.util.LinkedHashMap<>();
                try (Pipeline pipeline = Pipeline.start(bootstrap, "bench-" + prefix, work.resolve("state"), prefix, 4, (short) 1,
                        60_000_000_000L, SwapstreamConfig.DEFAULT_AGGREGATE_EMIT_INTERVAL_MS, Map.of())) {
                    pipeline.awaitRunning(started + timeoutMs * 1_000_000L);
                    startSecs = BenchMeasures.secs(started);
                    cpuBefore = BenchMeasures.cpuByThreadGroup();
                    PipelineRounds rounder = new PipelineRounds();
                    for (int r = 0; r < rounds; r++) {
                        runs.add(rounder.round(bootstrap, prefix, pipeline, "bench-r" + (r + 1), trace, timeoutMs, offline.get(0)));
                        err.printf("bench: pipeline round %d done%n", r + 1);
                        err.flush();
                    }
                    cpuRounds = BenchMeasures.minus(BenchMeasures.cpuByThreadGroup(), cpuBefore);
                    topicBytes = BenchMeasures.bytesByTopic(bootstrap, prefix);
                    for (String topic : List.of(SwapstreamConfig.SWITCH_BATCHES, SwapstreamConfig.THREAD_STATS)) {
                        codecs.put(topic, CompressionTrial.run(bootstrap, BenchMeasures.consumerConfig(bootstrap), CompressionTrial.values(BenchMeasures.consumerConfig(bootstrap),
                                prefix + topic, "bench-r" + rounds + ":"), SwapstreamConfig.MAX_MESSAGE_BYTES));
                    }
                    rollupFigures = PipelineRounds.rollup(bootstrap, prefix, work.resolve("state").resolve("rollup"), timeoutMs, runs);
                    if (queries) {
                        asked = QueryLoad.measure(pipeline, "/api/threads?top=25");
                        rowsIndexed = pipeline.indexes.rows();
                    }
                }
                Pipeline.Times p = runs.get(rounds - 1);
                BenchMeasures.Ceiling raw = BenchMeasures.ceiling(bootstrap, p.rawRecords(), p.rawBytes(), "raw", BufferPublisher.COMPRESSION, trace);
                BenchMeasures.Ceiling batches = BenchMeasures.ceiling(bootstrap, p.batchRecords(), p.batchBytes(), "batches", StageConfig.COMPRESSION, null);
                print(out, trace, bytes, offline, startSecs, runs, raw, batches);
                long allSwitches = offline.get(0).switches() * rounds;
                out.printf("bytes a switch each topic holds after the rounds, in the broker's log and as record values (%d switches in all):%n",
                        allSwitches);
                topicBytes.entrySet().stream().sorted(Map.Entry.comparingByValue(java.util.Comparator.comparingLong(BenchMeasures.TopicBytes::log).reversed()))
                        .forEach(e -> out.printf("  %-70s %10.1f MiB %7.2f B/switch  (values %7.2f B/switch)%n", e.getKey(),
                                e.getValue().log() / 1048576.0, (double) e.getValue().log() / allSwitches, (double) e.getValue().values() / allSwitches));
                long roundSwitches = offline.get(0).switches();
                codecs.forEach((topic, results) -> {
                    out.printf("the last round's %s records produced again by compression (the stages use %s):%n", topic, StageConfig.COMPRESSION);
                    for (CompressionTrial.Result c : results) {
                        out.printf("  %-6s %8.1f MiB in the log %7.2f B/switch   produce %.2f s, consume %.2f s%n", c.codec(),
                                c.logBytes() / 1048576.0, (double) c.logBytes() / roundSwitches, c.produceSecs(), c.consumeSecs());
                    }
                });
                out.printf("CPU seconds of all %d rounds by thread group (digits in names as N), the largest:%n", rounds);
                cpuRounds.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(12).forEach(e ->
                        out.printf("  %-70s %8.2f s%n", e.getKey(), e.getValue()));
                out.println(rollupFigures);
                for (QueryLoad.Figures q : asked) {
                    out.printf("queries: %s, %2d client(s): %6d requests, %5d failed, %8.0f requests/s, median %.2f ms, p99 %.2f ms (%d rows in the"
                            + " aggregate's index)%n", q.path(), q.clients(), q.requests(), q.failed(), q.perSecond(), q.p50Ms(), q.p99Ms(), rowsIndexed);
                }
            }
        } finally {
            Directories.deleteTree(work);
        }
        return 0;
    }


    private static void print(PrintWriter out, Path trace, long fileBytes, List<PipelineRounds.Offline> offline, double startSecs,
                              List<Pipeline.Times> runs, BenchMeasures.Ceiling raw, BenchMeasures.Ceiling batches) {
        long switches = offline.get(0).switches();
        double reference = switches / offline.get(offline.size() - 1).statsSecs();
        out.printf("swapstream bench: %s, %d switches, %.1f MiB, %d processors available%n", trace.getFileName(), switches,
                fileBytes / 1048576.0, Runtime.getRuntime().availableProcessors());
        out.printf("%-50s %9s %13s %7s%n", "", "seconds", "switches/s", "ratio");
        for (int r = 0; r < offline.size(); r++) {
            PipelineRounds.Offline o = offline.get(r);
            String round = offline.size() > 1 ? "round " + (r + 1) + ": " : "";
            out.printf("%-50s %9.2f %13.0f %7s%n", round + "offline decode (one thread)", o.decodeSecs(), switches / o.decodeSecs(), "");
            out.printf("%-50s %9.2f %13.0f %7.2f%n", round + "offline decode + stats (one thread)", o.statsSecs(),
                    switches / o.statsSecs(), switches / o.statsSecs() / reference);
        }
        out.printf("%-50s %9.2f %13s %7s%n", "pipeline: stages running (before round 1's clock)", startSecs, "", "");
        for (int r = 0; r < runs.size(); r++) {
            Pipeline.Times p = runs.get(r);
            String round = runs.size() > 1 ? "round " + (r + 1) + ": " : "";
            out.printf("%-50s %9.2f %13s %7s%n", round + "pipeline: ingest done", p.ingested(), "", "");
            out.printf("%-50s %9.2f %13.0f %7.2f%n", round + "pipeline: decode done", p.decoded(), switches / p.decoded(),
                    switches / p.decoded() / reference);
            out.printf("%-50s %9.2f %13.0f %7.2f%n", round + "pipeline end to end: aggregate done", p.aggregated(),
                    switches / p.aggregated(), switches / p.aggregated() / reference);
            out.printf("%-50s %9.2f %13.0f %7s%n", round + "  decode stage, CPU seconds of its thread", p.decodeCpuSecs(),
                    switches / p.decodeCpuSecs(), "");
            out.printf("%-50s %9.2f %13.0f %7s%n", round + "  aggregate stage, CPU seconds of its thread", p.aggregateCpuSecs(),
                    switches / p.aggregateCpuSecs(), "");
            out.printf("%-50s %9.2f %13s %7s%n", round + "  the whole JVM, CPU seconds (broker included)", p.jvm().cpuSecs(), "", "");
            out.printf("%-50s %9.2f %13s %7s%n", round + "    of which JIT compiling (compiler threads)", p.jvm().compileSecs(), "", "");
            out.printf("%-50s %9.2f %13s %7s%n", round + "    of which garbage collection (pauses)", p.jvm().gcSecs(), "", "");
        }
        for (var c : List.of(Map.entry("raw buffers", raw), Map.entry("switch batches", batches))) {
            BenchMeasures.Ceiling k = c.getValue();
            out.printf("%-50s %9.2f %13.0f %7.2f   (%d records, %.1f MiB, compression %s)%n", "Kafka alone: produce as many " + c.getKey(),
                    k.produceSecs(), switches / k.produceSecs(), switches / k.produceSecs() / reference, k.records(),
                    k.bytes() / 1048576.0, k.compression());
            out.printf("%-50s %9.2f %13.0f %7.2f%n", "Kafka alone: consume them", k.consumeSecs(), switches / k.consumeSecs(),
                    switches / k.consumeSecs() / reference);
        }
        Pipeline.Times p = runs.get(runs.size() - 1);
        out.printf("ratio: switches/s over the last round's offline decode + stats%n");
        // one round's offline figure moves by a third from round to round on 2 cores: medians of the later half say more
        int from = runs.size() / 2;
        double offlineMedian = BenchMeasures.median(offline.subList(from, offline.size()).stream().mapToDouble(PipelineRounds.Offline::statsSecs).toArray());
        double endToEndMedian = BenchMeasures.median(runs.subList(from, runs.size()).stream().mapToDouble(Pipeline.Times::aggregated).toArray());
        out.printf("rounds %d to %d, medians: offline decode + stats %.2f s, pipeline end to end %.2f s, ratio %.2f%n", from + 1,
                runs.size(), offlineMedian, endToEndMedian, offlineMedian / endToEndMedian);
        out.printf("pipeline records: %d raw buffers (%.1f MiB), %d switch batches (%.1f MiB, %.0f switches each)%n", p.rawRecords(),
                p.rawBytes() / 1048576.0, p.batchRecords(), p.batchBytes() / 1048576.0, (double) switches / Math.max(1, p.batchRecords()));
        long peakHeap = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) peakHeap += pool.getPeakUsage().getUsed();
        }
        out.printf("peak heap %.0f MiB (max %.0f MiB); peak RSS %s (broker, both stages and the offline runs in this one JVM)%n",
                peakHeap / 1048576.0, Runtime.getRuntime().maxMemory() / 1048576.0, BenchMeasures.peakRss());
        out.flush();
    }

}
