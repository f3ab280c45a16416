package io.swapstream.cli;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.StatsTable;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.RollupTable;
import io.swapstream.aggregate.rollup.Rollups;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.RecordFields;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "stats", description = "Per-thread ThreadStats of .etl files, whole-session or per tumbling window; with --group, the"
        + " fleet roll-ups per process name or per host over the files, one host each, or who woke whom: the WakeEdge records"
        + " of each file and window, as etw.wake-edges has them (no Kafka).")
final class StatsCommand implements Callable<Integer> {
    enum Format { jsonl, table }

    enum Group { thread, process, host, wakes }

    @Spec CommandSpec spec;

    @Parameters(paramLabel = "FILE.etl", arity = "1..*", description = "the traces, one host each") List<Path> files;

    @Option(names = "--window", paramLabel = "DURATION", converter = Durations.Window.class, description = "tumbling window, e.g. 60s;"
            + " without it (or 0s), one whole-session row per thread (--group process and host roll up windows: 60s unless given;"
            + " --group wakes: 60s unless given, 0s for the whole session)")
    Duration window;

    @Option(names = "--group", defaultValue = "thread", paramLabel = "GROUP", description = "${COMPLETION-CANDIDATES}: rows per thread,"
            + " rolled up per process name or per host across the files, or wake edges (waker process, woken process) per file")
    Group group;

    @Option(names = "--format", defaultValue = "jsonl", paramLabel = "FORMAT", description = "${COMPLETION-CANDIDATES}") Format format;

    @Option(names = "--top", paramLabel = "N", description = "only the first N rows by --by (the table shows every row without it)")
    Integer top;

    @Option(names = "--by", paramLabel = "FIELD", description = "the numeric field --top and the table sort on, highest first;"
            + " default waitP99Nanos (readyP99Nanos with --group process or host, wakeCount with --group wakes)")
    String by;

    @Option(names = "--host", paramLabel = "HOST or NAME=FILE", description = "host a trace came from: NAME=FILE for one of the files,"
            + " or HOST for the only one; default: each file's name without extension")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "override MaximumWaitReason (e.g. 0x28); default: by the trace's OS build")
    String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        // --group wakes --window 0s: the whole session's edges, as a stage run without windows sends them
        long windowNanos = window == null ? (group == Group.thread ? 0 : 60_000_000_000L) : window.toNanos();
        if (windowNanos == 0 && (group == Group.process || group == Group.host)) {
            throw new UserInputException("--window: --group " + group + " rolls up windows: give one of more than 0");
        }
        if (top != null) Options.atLeast("--top", top, 1);
        String field = by != null ? by : group == Group.thread ? "waitP99Nanos" : group == Group.wakes ? "wakeCount" : "readyP99Nanos";
        List<String> sortable = switch (group) {
            case thread -> ThreadStatsFields.SORTABLE;
            case process -> RecordFields.numeric(ProcessStats.SCHEMA$);
            case host -> RecordFields.numeric(HostStats.SCHEMA$);
            case wakes -> RecordFields.numeric(WakeEdge.SCHEMA$);
        };
        if (!sortable.contains(field)) throw new UserInputException("--by: cannot sort by '" + field + "'; one of " + sortable);
        Integer override = Options.maxWaitReason(maxWaitReason);
        Options.traceFiles(files);
        Map<Path, String> named = hostNames();
        PrintWriter out = spec.commandLine().getOut();
        List<ThreadStats> rows = new ArrayList<>();
        List<WakeEdge> edges = new ArrayList<>();
        int status = 0;
        for (Path file : files) {
            SessionStatistics stats = new SessionStatistics(windowNanos);
            SessionDecoder d = SessionDecoder.decodeBatches(file, named.getOrDefault(file, Options.host(null, file)), override, stats::accept, null);
            if (group == Group.wakes) edges.addAll(stats.wakeEdges());
            else rows.addAll(windowNanos > 0 ? stats.windowed() : stats.wholeSession());
            status = Math.max(status, Options.reportExpansion(spec, file, d.counters()));
        }
        boolean jsonLines = format == Format.jsonl;
        if (group == Group.wakes) {
            RollupTable.writeWakeEdges(out, top != null || !jsonLines ? RollupTable.ranked(edges, field, top) : edges, jsonLines);
        } else if (group == Group.thread) {
            if (top != null || !jsonLines) rows = StatsTable.ranked(rows, field, top);
            StatsTable.write(out, rows, jsonLines, windowNanos > 0);
        } else {
            Rollups rollup = new Rollups(group == Group.process ? RollupGroup.Kind.PROCESS : RollupGroup.Kind.HOST);
            rollup.addAll(rows);
            if (group == Group.process) {
                List<ProcessStats> p = rollup.processRows();
                RollupTable.writeProcesses(out, top != null || !jsonLines ? RollupTable.ranked(p, field, top) : p, jsonLines);
            } else {
                List<HostStats> h = rollup.hostRows();
                RollupTable.writeHosts(out, top != null || !jsonLines ? RollupTable.ranked(h, field, top) : h, jsonLines);
            }
        }
        out.flush();
        return status;
    }

    /** The files named by --host NAME=FILE, or the one file named by --host HOST. */
    private Map<Path, String> hostNames() {
        Map<Path, String> named = new HashMap<>();
        for (String h : hosts) {
            int eq = h.indexOf('=');
            if (eq < 0) {
                if (files.size() != 1) throw new UserInputException("--host " + h + ": with several files, name each as --host NAME=FILE");
                named.put(files.get(0), h);
                continue;
            }
            Path f = Path.of(h.substring(eq + 1));
            if (eq == 0 || !files.contains(f)) throw new UserInputException("--host " + h + ": not NAME=FILE for one of the files given");
            named.put(f, h.substring(0, eq));
        }
        return named;
    }
}
