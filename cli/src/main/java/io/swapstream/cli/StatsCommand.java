package io.swapstream.cli;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.schemas.avro.ThreadStats;
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

    @Parameters(paramLabel = "FILE.etl", description = "the trace") Path file;

    @Option(names = "--window", paramLabel = "DURATION", description = "tumbling window, e.g. 60s; without it, one whole-session row per thread")
    String window;

    @Option(names = "--format", defaultValue = "jsonl", paramLabel = "FORMAT", description = "${COMPLETION-CANDIDATES}") Format format;

    @Option(names = "--top", paramLabel = "N", description = "only the first N rows by --by (the table shows every row without it)")
    Integer top;

    @Option(names = "--by", defaultValue = "waitP99Nanos", paramLabel = "FIELD", description = "the field --top and the table sort on, highest first")
    String by;

    @Option(names = "--host", paramLabel = "HOST", description = "host the trace came from; default: the file name without extension") String host;

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "override MaximumWaitReason (e.g. 0x28); default: by the trace's OS build")
    String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        long windowNanos = window == null ? 0 : Options.positiveDuration("--window", window);
        if (top != null) Options.atLeast("--top", top, 1);
        if (!ThreadStatsFields.SORTABLE.contains(by)) {
            throw new UserInputException("--by: cannot sort by '" + by + "'; one of " + ThreadStatsFields.SORTABLE);
        }
        Integer override = Options.maxWaitReason(maxWaitReason);
        Options.traceFiles(List.of(file));
        SessionStatistics stats = new SessionStatistics(windowNanos);
        SessionDecoder d = SessionDecoder.decodeBatches(file, Options.host(host, file), override, stats::accept, null);
        List<ThreadStats> rows = windowNanos > 0 ? stats.windowed() : stats.wholeSession();
        if (top != null || format == Format.table) rows = StatsTable.ranked(rows, by, top);
        PrintWriter out = spec.commandLine().getOut();
        StatsTable.write(out, rows, format == Format.jsonl, windowNanos > 0);
        out.flush();
        Options.reportExpansion(spec, file, d.counters());
        return 0;
    }
}
