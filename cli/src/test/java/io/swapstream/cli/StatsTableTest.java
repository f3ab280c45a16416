package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.StatsTable;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.schemas.avro.ThreadStats;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatsTableTest {
    /** A row read back from Avro holds topReadiers in hash order: the table still shows the most readied first. */
    @Test
    void topReadiersPrintMostReadiedFirst() {
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.switchIn(1_000, 500, 1);
        ThreadStats row = a.toStats("s", "h", 7, 40, "app.exe", null, 0, 10, true);
        Map<String, Long> unordered = new HashMap<>(Map.of("1080", 4L, "1532", 5L, "1388", 4L, "2084", 1L, "1144", 4L));
        row.setTopReadiers(unordered);
        StringWriter out = new StringWriter();
        StatsTable.print(new PrintWriter(out, true), List.of(row), false);
        assertTrue(out.toString().contains("1532 (5) 1080 (4) 1144 (4) 1388 (4) 2084 (1)"), out.toString());
        // rows of several hosts say whose they are
        assertTrue(out.toString().lines().toList().get(0).startsWith("host "), out.toString());
        assertTrue(out.toString().lines().toList().get(1).startsWith("h "), out.toString());
    }
}
