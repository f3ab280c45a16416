package io.swapstream.aggregate;

import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** ThreadStats for people and programs: ranked, as JSON lines or an aligned table (times in microseconds). */
public final class StatsTable {
    private StatsTable() {}

    /** Highest {@code by} first (then window, then TID); the first {@code top} when given. */
    public static List<ThreadStats> ranked(List<ThreadStats> rows, String by, Integer top) {
        List<ThreadStats> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingDouble((ThreadStats t) -> ThreadStatsFields.sortValue(t, by)).reversed()
                .thenComparingLong(ThreadStats::getWindowStartNanos).thenComparingInt(ThreadStats::getThreadId));
        return top != null && sorted.size() > top ? sorted.subList(0, top) : sorted;
    }

    public static void write(PrintWriter out, List<ThreadStats> rows, boolean jsonLines, boolean windowed) throws IOException {
        if (!jsonLines) {
            print(out, rows, windowed);
            return;
        }
        for (ThreadStats t : rows) out.println(RecordJson.toJson(t));
    }

    public static void print(PrintWriter out, List<ThreadStats> rows, boolean windowed) {
        // Waits (blocked until readied) and Ready (runnable, no processor) as WPA separates them, then the whole gap
        String head = String.format("%s%-16s %-7s %-6s %-18s %-12s %7s %7s %10s %10s %10s %10s %10s %10s %10s %9s %-6s %-22s %s",
                windowed ? String.format("%-24s ", "window") : "", "host", "tid", "pid", "process", "thread", "in", "out",
                "ready.p50", "ready.p99", "ready.max", "wait.p50", "wait.p90", "wait.p99", "run.sum", "prio", "vol%",
                "top wait reason", "top readiers");
        out.println(head);
        for (ThreadStats t : rows) {
            String reason = t.getWaitReasonCounts().entrySet().stream().max(Map.Entry.comparingByValue())
                    .map(e -> e.getKey() + " (" + e.getValue() + ")").orElse("-");
            long outs = t.getSwitchOutCount();
            // a map read back from Avro has no order: most readied first, then by thread id
            StringBuilder readiers = new StringBuilder();
            t.getTopReadiers().entrySet().stream()
                    .sorted(Comparator.comparing((Map.Entry<String, Long> e) -> -e.getValue())
                            .thenComparingLong(e -> Long.parseLong(e.getKey())))
                    .forEach(e -> readiers.append(readiers.length() == 0 ? "" : " ").append(e.getKey()).append(" (").append(e.getValue()).append(")"));
            out.println(String.format("%s%-16s %-7d %-6s %-18s %-12s %7d %7d %10s %10s %10s %10s %10s %10s %10s %9s %-6s %-22s %s",
                    windowed ? String.format("%-24s ", Instant.ofEpochSecond(0, t.getWindowStartNanos())) : "",
                    cut(t.getHost(), 16), t.getThreadId(), t.getProcessId() == null ? "-" : t.getProcessId(), cut(t.getProcessName(), 18),
                    cut(t.getThreadName(), 12), t.getSwitchInCount(), outs, us(t.getReadyP50Nanos()), us(t.getReadyP99Nanos()),
                    us(t.getReadyMaxNanos()), us(t.getWaitP50Nanos()), us(t.getWaitP90Nanos()),
                    us(t.getWaitP99Nanos()), us(t.getRunSumNanos()),
                    t.getPriorityMin() == null ? "-" : t.getPriorityMin() + "-" + t.getPriorityMax(),
                    outs == 0 ? "-" : String.valueOf(Math.round(100.0 * t.getVoluntarySwitchOutCount() / outs)), reason,
                    readiers.length() == 0 ? "-" : readiers));
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
