package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.avro.ThreadStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/** The index's top-N against a full sort of the same rows, after puts, updates and removals. */
class RowIndexTest {
    record Row(String key, ThreadStats stats, Long window) {}

    @Test
    void topNEqualsAFullSortForEveryKindOfQuery() {
        Random random = new Random(42);
        AtomicLong changes = new AtomicLong();
        RowIndex index = new RowIndex(changes);
        Map<String, Row> rows = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            String session = "s" + random.nextInt(12);
            int tid = random.nextInt(300);
            Long window = random.nextInt(3) == 0 ? null : 60_000_000_000L * random.nextInt(6);
            String key = window == null ? session + "/" + tid : session + "/w/" + window + "/" + tid;
            ThreadStats t = row(random, session, tid, window);
            index.put(key, t, window);
            rows.put(key, new Row(key, t, window));
            if (random.nextInt(10) == 0) { // removals, the latest window of a thread among them
                String gone = rows.keySet().iterator().next();
                index.remove(gone);
                rows.remove(gone);
            }
        }
        assertEquals(rows.size(), index.size());
        assertTrue(changes.get() >= 20_000, "every change counted");
        for (String field : List.of("waitP99Nanos", "readySumNanos", "priorityMin", "priorityMean", "switchInCount", "threadId")) {
            for (RowIndex.Rows kind : RowIndex.Rows.values()) {
                for (String session : new String[] {null, "s3", "s11"}) {
                    for (int n : new int[] {1, 25, 1_000_000}) {
                        List<String> expected = fullSort(rows.values(), field, session, kind).stream().limit(n).toList();
                        List<String> got = index.top(field, n, session, kind).stream().map(RowIndex.Hit::storeKey).toList();
                        assertEquals(expected, got, field + " " + kind + " " + session + " top " + n);
                    }
                }
            }
        }
        assertTrue(index.top("waitP99Nanos", 5, "no-such-session", RowIndex.Rows.WHOLE).isEmpty());
        assertFalse(index.hasSession("no-such-session"));
    }

    /** What the query means, by brute force: nulls last, ties by session, thread, window. */
    static List<String> fullSort(java.util.Collection<Row> rows, String field, String session, RowIndex.Rows kind) {
        List<Row> candidates = new ArrayList<>();
        // the latest window: of the session asked for, or of all; every thread's row in it
        long latest = Long.MIN_VALUE;
        for (Row r : rows) {
            if ((session == null || r.stats().getSession().toString().equals(session)) && r.window() != null) latest = Math.max(latest, r.window());
        }
        for (Row r : rows) {
            if (session != null && !r.stats().getSession().toString().equals(session)) continue;
            if (kind == RowIndex.Rows.WHOLE && r.window() == null) candidates.add(r);
            if (kind == RowIndex.Rows.ALL && r.window() != null) candidates.add(r);
            if (kind == RowIndex.Rows.LATEST && r.window() != null && r.window() == latest) candidates.add(r);
        }
        candidates.sort(Comparator.comparingDouble((Row r) -> -ThreadStatsFields.sortValue(r.stats(), field))
                .thenComparing(r -> r.stats().getSession().toString()).thenComparingInt(r -> r.stats().getThreadId())
                .thenComparingLong(r -> r.window() == null ? Long.MIN_VALUE : r.window()));
        return candidates.stream().map(Row::key).toList();
    }

    static ThreadStats row(Random random, String session, int tid, Long window) {
        ThreadStats t = new ThreadStatsAccumulator().toStats(session, "h", tid, null, null, null, window == null ? 0 : window, 0, false);
        for (String f : ThreadStatsFields.SORTABLE) {
            if (f.equals("threadId")) continue;
            Schema.Field field = ThreadStats.SCHEMA$.getField(f);
            boolean nullable = field.schema().getType() == Schema.Type.UNION;
            if (nullable && random.nextInt(5) == 0) {
                t.put(field.pos(), null);
                continue;
            }
            Schema s = nullable ? field.schema().getTypes().get(1) : field.schema();
            int small = random.nextInt(50); // few distinct values: ties are common
            t.put(field.pos(), switch (s.getType()) {
                case INT -> small;
                case DOUBLE -> small / 4.0;
                default -> (long) small * 1000;
            });
        }
        return t;
    }
}
