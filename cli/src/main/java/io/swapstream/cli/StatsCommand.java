package io.swapstream.cli;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStats;
import io.swapstream.decode.SessionDecoder;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "stats", description = "Per-thread ThreadStats of a .etl file, whole-session or per tumbling window (no Kafka).")
final class StatsCommand implements Callable<Integer> {
    enum Format { jsonl, table }

    @Spec CommandSpec spec;

    @Parameters(paramLabel = "FILE.etl") Path file;

    @Option(names = "--window", description = "tumbling window, e.g. 60s; default: whole session only") String window;

    @Option(names = "--format", defaultValue = "jsonl", description = "jsonl or table") Format format;

    @Option(names = "--top", description = "only the first N threads by --by") Integer top;

    @Option(names = "--by", defaultValue = "waitP99Nanos", description = "sort field for --top and the table; default ${DEFAULT-VALUE}") String by;

    @Option(names = "--host", description = "host the trace came from; default: the file name") String host;

    @Option(names = "--max-wait-reason", description = "override MaximumWaitReason (e.g. 0x28)") String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        long windowNanos = Options.duration(window);
        if (!ThreadStats.SORTABLE.contains(by)) {
            throw new IllegalArgumentException("--by: cannot sort by '" + by + "'; one of " + ThreadStats.SORTABLE);
        }
        SessionStatistics stats = new SessionStatistics(windowNanos);
        SessionDecoder d = SessionDecoder.decodeFile(file, Options.host(host, file), Options.maxWaitReason(maxWaitReason),
                stats::accept, null);
        List<ThreadStats> rows = windowNanos > 0 ? stats.windowed(d.directory()::thread)
                : stats.wholeSession(d.directory()::thread);
        if (top != null || format == Format.table) rows = StatsTable.ranked(rows, by, top);
        PrintWriter out = spec.commandLine().getOut();
        StatsTable.write(out, rows, format == Format.jsonl, windowNanos > 0);
        out.flush();
        Options.reportInconsistencies(spec, d.counters());
        return 0;
    }
}
