package io.swapstream.aggregate.rollup;

import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.json.RecordJson;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecordBase;

/** Fleet roll-ups for people and programs: ranked by a numeric field, as JSON lines (sketch bytes left out) or a table. */
public final class RollupTable {
    private RollupTable() {}

    /** The numeric fields of {@code schema}: what --by may name. */
    /** Highest {@code by} first (nulls last), then window, then name; the first {@code top} when given. */
    public static <R extends SpecificRecordBase> List<R> ranked(List<R> rows, String by, Integer top) {
        List<R> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingDouble((R r) -> -value(r, by)).thenComparingLong(r -> (Long) r.get("windowStartNanos"))
                .thenComparing(r -> String.valueOf(r.get(0))));
        return top != null && sorted.size() > top ? sorted.subList(0, top) : sorted;
    }

    static double value(SpecificRecordBase r, String field) {
        return r.get(field) instanceof Number n ? n.doubleValue() : Double.NEGATIVE_INFINITY;
    }

    /** {@code r} as JSON without its sketches' bytes (asked for by name only). */
    static String json(SpecificRecordBase r, boolean sketches) {
        if (!sketches && r.getSchema().getField("waitSketch") != null) {
            r = (SpecificRecordBase) org.apache.avro.specific.SpecificData.get().deepCopy(r.getSchema(), r);
            for (org.apache.avro.Schema.Field f : r.getSchema().getFields()) if (f.name().endsWith("Sketch")) r.put(f.pos(), null);
        }
        return RecordJson.toJson(r);
    }

    public static void writeProcesses(PrintWriter out, List<ProcessStats> rows, boolean jsonLines) {
        if (jsonLines) {
            rows.forEach(r -> out.println(json(r, false)));
            return;
        }
        out.println(String.format("%-24s %-24s %5s %7s %9s %10s %10s %10s %10s %12s  %s", "window", "process", "hosts", "threads",
                "in", "wait.p50", "wait.p99", "ready.p50", "ready.p99", "ready.sum", "top hosts by ready time"));
        for (ProcessStats p : rows) {
            out.println(String.format("%-24s %-24s %5d %7d %9d %10s %10s %10s %10s %12s  %s", Instant.ofEpochSecond(0, p.getWindowStartNanos()),
                    cut(p.getProcessName() == null ? "(unknown)" : p.getProcessName().toString(), 24), p.getHosts(), p.getThreads(),
                    p.getSwitchInCount(), us(p.getWaitP50Nanos()), us(p.getWaitP99Nanos()), us(p.getReadyP50Nanos()), us(p.getReadyP99Nanos()),
                    us(p.getReadySumNanos()), top(p.getTopHosts())));
        }
        out.println("(times in microseconds)");
    }

    public static void writeHosts(PrintWriter out, List<HostStats> rows, boolean jsonLines) {
        if (jsonLines) {
            rows.forEach(r -> out.println(json(r, false)));
            return;
        }
        out.println(String.format("%-24s %-20s %9s %7s %9s %10s %10s %10s %12s  %s", "window", "host", "processes", "threads", "in",
                "ready.p50", "ready.p99", "wait.p99", "ready.sum", "top processes by ready time"));
        for (HostStats h : rows) {
            out.println(String.format("%-24s %-20s %9d %7d %9d %10s %10s %10s %12s  %s", Instant.ofEpochSecond(0, h.getWindowStartNanos()),
                    cut(h.getHost().toString(), 20), h.getProcesses(), h.getThreads(), h.getSwitchInCount(), us(h.getReadyP50Nanos()),
                    us(h.getReadyP99Nanos()), us(h.getWaitP99Nanos()), us(h.getReadySumNanos()), top(h.getTopProcesses())));
        }
        out.println("(times in microseconds)");
    }

    public static void writeWakeEdges(PrintWriter out, List<WakeEdge> rows, boolean jsonLines) {
        if (jsonLines) {
            rows.forEach(r -> out.println(json(r, false)));
            return;
        }
        out.println(String.format("%-24s %-20s %-24s %-24s %9s %12s %10s %12s %10s", "window", "host", "waker", "woken", "wakes",
                "wait.sum", "wait.p99", "ready.sum", "ready.p99"));
        for (WakeEdge e : rows) {
            out.println(String.format("%-24s %-20s %-24s %-24s %9d %12s %10s %12s %10s", Instant.ofEpochSecond(0, e.getWindowStartNanos()),
                    cut(e.getHost().toString(), 20), cut(e.getWakerProcess().toString(), 24), cut(e.getWokenProcess().toString(), 24),
                    e.getWakeCount(), us(e.getWaitSumNanos()), us(e.getWaitP99Nanos()), us(e.getReadySumNanos()), us(e.getReadyP99Nanos())));
        }
        out.println("(times in microseconds)");
    }

    private static String top(Map<String, Long> m) {
        StringBuilder b = new StringBuilder();
        m.entrySet().stream().sorted(Comparator.comparing((Map.Entry<String, Long> e) -> -e.getValue()).thenComparing(e -> e.getKey().toString()))
                .forEach(e -> b.append(b.length() == 0 ? "" : ", ").append(e.getKey().length() == 0 ? "(unknown)" : e.getKey()));
        return b.length() == 0 ? "-" : b.toString();
    }

    private static String us(Long nanos) {
        return nanos == null ? "-" : String.format("%.1f", nanos / 1000.0);
    }

    private static String cut(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }
}
