package io.swapstream.aggregate;

import io.swapstream.schemas.avro.ThreadStats;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/** The ThreadStats fields one may rank threads by, and their values. */
public final class ThreadStatsFields {
    private ThreadStatsFields() {}

    /** Every numeric field of the schema (int, long or double, nullable or not), in schema order. */
    public static final List<String> SORTABLE = numericFields();

    /** The schema positions of the {@link #SORTABLE} fields, in the same order. */
    static final int[] POSITIONS = SORTABLE.stream().mapToInt(f -> ThreadStats.SCHEMA$.getField(f).pos()).toArray();

    /** The column of a {@link #SORTABLE} field; -1 for another name. */
    public static int column(String field) {
        return SORTABLE.indexOf(field);
    }

    /** The value of a {@link #SORTABLE} field, nulls as negative infinity. */
    public static double sortValue(ThreadStats t, String field) {
        int c = column(field);
        if (c < 0) throw new IllegalArgumentException("cannot sort by '" + field + "'; one of " + SORTABLE);
        return value(t, c);
    }

    /** The value of column {@code c}, nulls as negative infinity. */
    static double value(ThreadStats t, int c) {
        return t.get(POSITIONS[c]) instanceof Number n ? n.doubleValue() : Double.NEGATIVE_INFINITY;
    }

    /** {@code session/tid} for whole-session rows, {@code session/tid/windowStart} for windows (docs/architecture.md "Topics and records"). */
    public static String key(String session, int tid, Long windowStart) {
        return windowStart == null ? session + "/" + tid : session + "/" + tid + "/" + windowStart;
    }

    private static List<String> numericFields() {
        List<String> out = new ArrayList<>();
        for (Schema.Field f : ThreadStats.SCHEMA$.getFields()) {
            Schema s = f.schema();
            if (s.getType() == Schema.Type.UNION) {
                s = s.getTypes().stream().filter(x -> x.getType() != Schema.Type.NULL).findFirst().orElse(s);
            }
            switch (s.getType()) {
                case INT, LONG, DOUBLE, FLOAT -> out.add(f.name());
                default -> { }
            }
        }
        return List.copyOf(out);
    }
}
