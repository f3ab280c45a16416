package io.swapstream.aggregate;

import io.swapstream.schemas.avro.ThreadStats;
import java.util.List;

/** The ThreadStats fields one may rank threads by, and their values. */
public final class ThreadStatsFields {
    private ThreadStatsFields() {}

    /** Numeric fields a {@code --by} option may sort on. */
    public static final List<String> SORTABLE = List.of("switchInCount", "switchOutCount", "voluntarySwitchOutCount",
            "involuntarySwitchOutCount", "waitCount", "waitSumNanos", "waitMaxNanos", "waitMeanNanos", "waitP50Nanos",
            "waitP90Nanos", "waitP99Nanos", "runCount", "runSumNanos", "runMaxNanos", "priorityMax", "priorityMean",
            "readyCount", "readySumNanos", "readyMaxNanos", "readyP50Nanos", "readyP90Nanos", "readyP99Nanos");

    /** The value of a {@link #SORTABLE} field, nulls as negative infinity. */
    public static double sortValue(ThreadStats t, String field) {
        if (!SORTABLE.contains(field)) throw new IllegalArgumentException("cannot sort by '" + field + "'; one of " + SORTABLE);
        Object v = t.get(field);
        return v instanceof Number n ? n.doubleValue() : Double.NEGATIVE_INFINITY;
    }

    /** {@code session/tid} for whole-session rows, {@code session/tid/windowStart} for windows (DESIGN.md topics). */
    public static String key(String session, int tid, Long windowStart) {
        return windowStart == null ? session + "/" + tid : session + "/" + tid + "/" + windowStart;
    }
}
