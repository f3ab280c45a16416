package io.swapstream.cli;

import io.swapstream.aggregate.ThreadStats;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** ThreadStats for people and programs: ranked, as JSON lines or an aligned table (times in microseconds). */
final class StatsTable {
    private StatsTable() {}

    /** Highest {@code by} first (then window, then TID); the first {@code top} when given. */
    static List<ThreadStats> ranked(List<ThreadStats> rows, String by, Integer top) {
        List<ThreadStats> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingDouble((ThreadStats t) -> t.sortValue(by)).reversed()
                .thenComparingLong(ThreadStats::windowStartNanos).thenComparingInt(ThreadStats::threadId));
        return top != null && sorted.size() > top ? sorted.subList(0, top) : sorted;
    }

    static void write(PrintWriter out, List<ThreadStats> rows, boolean jsonLines, boolean windowed) throws IOException {
        if (!jsonLines) {
            print(out, rows, windowed);
            return;
        }
        ObjectMapper json = new ObjectMapper();
        for (ThreadStats t : rows) out.println(json.writeValueAsString(t));
    }

    static void print(PrintWriter out, List<ThreadStats> rows, boolean windowed) {
        String head = String.format("%s%-7s %-6s %-18s %-12s %7s %7s %10s %10s %10s %10s %10s %9s %-6s %s",
                windowed ? String.format("%-24s ", "window") : "", "tid", "pid", "process", "thread", "in", "out",
                "wait.p50", "wait.p90", "wait.p99", "wait.max", "run.sum", "prio", "vol%", "top wait reason");
        out.println(head);
        for (ThreadStats t : rows) {
            String reason = t.waitReasonCounts().entrySet().stream().max(Map.Entry.comparingByValue())
                    .map(e -> e.getKey() + " (" + e.getValue() + ")").orElse("-");
            long outs = t.switchOutCount();
            out.println(String.format("%s%-7d %-6s %-18s %-12s %7d %7d %10s %10s %10s %10s %10s %9s %-6s %s",
                    windowed ? String.format("%-24s ", Instant.ofEpochSecond(0, t.windowStartNanos())) : "",
                    t.threadId(), t.processId() == null ? "-" : t.processId(), cut(t.processName(), 18), cut(t.threadName(), 12),
                    t.switchInCount(), outs, us(t.waitP50Nanos()), us(t.waitP90Nanos()), us(t.waitP99Nanos()),
                    us(t.waitMaxNanos()), us(t.runSumNanos()),
                    t.priorityMin() == null ? "-" : t.priorityMin() + "-" + t.priorityMax(),
                    outs == 0 ? "-" : String.valueOf(Math.round(100.0 * t.voluntarySwitchOutCount() / outs)), reason));
        }
        out.println("(times in microseconds)");
    }

    private static String us(Long nanos) {
        return nanos == null ? "-" : String.format("%.1f", nanos / 1000.0);
    }

    private static String cut(String s, int n) {
        if (s == null) return "-";
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }
}
