package io.swapstream.cli;

import io.swapstream.decode.inspect.FileInventory;
import io.swapstream.decode.inspect.LiveMergeProbe;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.schemas.json.RecordJson;
import java.time.Duration;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "inspect", description = "Buffers, processors, header types, HookIds, logfile header and loss flags of .etl files (no Kafka).")
final class InspectCommand implements Callable<Integer> {
    enum Format { table, json }

    @Spec CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE.etl", description = "one or more traces")
    List<Path> files;

    @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT", description = "${COMPLETION-CANDIDATES} (json: one object per file per line)")
    Format format;

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "override MaximumWaitReason (e.g. 0x28) for every file; default: by each trace's OS build")
    String maxWaitReason;

    @Option(names = "--live", description = "also decode each file as a live session would be (no lateness known ahead) and report"
            + " what the decode stage's merge held: items, MiB, its largest checkpoint, switches its limits let out of order")
    boolean live;

    @Option(names = "--max-lateness", defaultValue = "5m", paramLabel = "DURATION", description = "with --live: the merge's maximum"
            + " lateness, as decode --max-lateness")
    Duration maxLateness;

    @Option(names = "--flush-timer", paramLabel = "DURATION", description = "with --live: the loggers' flush timer, as ingest --flush-timer")
    Duration flushTimer;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Integer override = Options.maxWaitReason(maxWaitReason);
        ObjectMapper json = RecordJson.MAPPER;
        int status = 0;
        for (Path f : files) {
            FileInventory inv;
            try {
                Options.traceFiles(List.of(f));
                inv = FileInventory.of(f, override);
            } catch (Exception e) {
                spec.commandLine().getErr().println("swapstream: " + Swapstream.userMessage(e));
                status = Math.max(status, Swapstream.exitCode(e));
                continue;
            }
            Map<String, Object> m = inv.toMap();
            if (live) {
                MergeLimits limits = MergeLimits.live(maxLateness.toNanos(), Long.MAX_VALUE / 2)
                        .withFlushTimer(flushTimer == null ? -1 : Math.max(1, flushTimer.toMillis()));
                m.put("liveMerge", LiveMergeProbe.of(f, limits).toMap());
            }
            if (format == Format.json) {
                out.println(json.writeValueAsString(m));
            } else {
                printTable(out, m);
            }
            out.flush();
        }
        return status;
    }

    /** How late buffers came: the file's largest, then each processor's that wrote a late one. */
    @SuppressWarnings("unchecked")
    private static void printLateness(PrintWriter out, Map<String, Object> m) {
        out.printf("  %-30s %.3f s (buffer %s)%n", "lateness (largest):", (double) m.get("maxSeconds"), m.get("maxBuffer"));
        ((Map<String, Map<String, Object>>) m.get("byProcessor")).forEach((cpu, v) ->
                out.printf("    processor %s: %.3f s (buffer %s)%n", cpu, (double) v.get("seconds"), v.get("buffer")));
    }

    @SuppressWarnings("unchecked")
    private static void printTable(PrintWriter out, Map<String, Object> m) {
        out.println(m.get("file"));
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (e.getKey().equals("file")) continue;
            if (e.getKey().equals("lateness")) {
                printLateness(out, (Map<String, Object>) e.getValue());
                continue;
            }
            if (e.getValue() instanceof Map<?, ?> sub) {
                out.println("  " + e.getKey() + ":");
                ((Map<String, Object>) sub).forEach((k, v) -> out.printf("    %-28s %s%n", k, v));
            } else {
                out.printf("  %-30s %s%n", e.getKey(), e.getValue());
            }
        }
    }
}
