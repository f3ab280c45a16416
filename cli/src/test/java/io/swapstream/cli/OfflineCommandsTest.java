package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.etw.EtlWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OfflineCommandsTest {
    @TempDir Path dir;
    final ObjectMapper json = new ObjectMapper();

    Path generate(String mode, int switches) {
        Path f = dir.resolve(mode + ".etl");
        CliRunner r = CliRunner.run("generate", "-o", f.toString(), "--mode", mode, "--switches", String.valueOf(switches));
        assertEquals(0, r.exit(), r.err());
        return f;
    }

    @Test
    void switchesJsonLinesUseTheDesignFieldNamesWithNulls() throws Exception {
        Path f = generate("compact", 2000);
        CliRunner r = CliRunner.run("switches", f.toString(), "--host", "web01");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(2000, lines.size());
        for (String line : lines.subList(0, 50)) {
            JsonNode n = json.readTree(line);
            List<String> keys = new ArrayList<>();
            for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) keys.add(it.next());
            assertEquals(SwitchRow.FIELDS, keys);
            assertEquals("web01", n.get("host").asText());
            assertTrue(n.get("newThreadPriority").isNull(), "compact carries no new-thread priority");
        }
    }

    @Test
    void csvHasAHeaderAndOneRowPerSwitch() {
        Path f = generate("cswitch", 1000);
        CliRunner r = CliRunner.run("switches", f.toString(), "--format", "csv");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(String.join(",", SwitchRow.FIELDS), lines.get(0));
        assertEquals(1001, lines.size());
        assertEquals(SwitchRow.FIELDS.size(), lines.get(1).split(",", -1).length);
    }

    @Test
    void statsTopByP99AndWindows() throws Exception {
        Path f = generate("compact", 20000);
        CliRunner top = CliRunner.run("stats", f.toString(), "--top", "5", "--by", "waitP99Nanos");
        assertEquals(0, top.exit(), top.err());
        List<String> lines = top.out().lines().toList();
        assertEquals(5, lines.size());
        double prev = Double.MAX_VALUE;
        for (String l : lines) {
            JsonNode n = json.readTree(l);
            assertTrue(n.get("waitReasonCounts").isObject() && n.get("waitReasonCounts").size() > 0, l);
            assertEquals(32, n.get("priorityHistogram").size(), l);
            assertTrue(n.get("pmcDeltas").isNull(), "a compact trace has no PMC counters: " + l);
            assertTrue(n.get("processName").asText().startsWith("app"), l);
            double p99 = n.get("waitP99Nanos").asDouble();
            assertTrue(p99 <= prev);
            prev = p99;
        }
        CliRunner win = CliRunner.run("stats", f.toString(), "--window", "1s");
        assertEquals(0, win.exit(), win.err());
        for (String l : win.out().lines().toList()) {
            JsonNode n = json.readTree(l);
            assertEquals(1_000_000_000L, n.get("windowEndNanos").asLong() - n.get("windowStartNanos").asLong());
            assertEquals(0, n.get("windowStartNanos").asLong() % 1_000_000_000L);
        }
        CliRunner table = CliRunner.run("stats", f.toString(), "--format", "table", "--top", "3");
        assertEquals(5, table.out().lines().count(), table.out());
        // a window of 0 is the whole session, as no window
        CliRunner whole = CliRunner.run("stats", f.toString());
        CliRunner zero = CliRunner.run("stats", f.toString(), "--window", "0s");
        assertEquals(0, zero.exit(), zero.err());
        assertEquals(whole.out(), zero.out());
    }

    /**
     * A processor whose batch reaches the trace 29 s after later events of the other (a file session
     * writes a quiet processor's buffer when it is full, or at the end): the offline commands read the
     * file's lateness first and wait for it, so every row is in time order, and inspect names it.
     */
    @Test
    void aBufferWrittenLateIsWaitedForAndInspectNamesIt() throws Exception {
        Path f = dir.resolve("late.etl");
        long second = 10_000_000L;
        try (EtlWriter w = new EtlWriter(f, EtlWriter.Session.defaults(2, 132223104000000000L), 1000)) {
            ByteBuffer cs = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
            for (int k = 0; k < 30; k++) {
                cs.putInt(0, k % 2 == 0 ? 300 : 0).putInt(4, k % 2 == 0 ? 0 : 300).put(14, (byte) (k % 2 == 0 ? 2 : 5));
                w.perfInfoEvent(0, 0x0524, 4, 1000 + k * second, null, null, cs.array(), 24);
            }
            // processor 1: two idle packets at +10 and +20 ticks, logged 30 s later
            ByteBuffer batch = ByteBuffer.allocate(0x58 + 4).order(ByteOrder.LITTLE_ENDIAN);
            batch.putLong(0, 1000).putShort(0x58, (short) (10 << 2)).putShort(0x5A, (short) (10 << 2));
            w.perfInfoEvent(1, 0x0525, 2, 1000 + 30 * second, null, null, batch.array(), batch.capacity());
        }
        CliRunner sw = CliRunner.run("switches", f.toString());
        assertEquals(0, sw.exit(), sw.err());
        List<JsonNode> rows = sw.out().lines().map(l -> {
            try {
                return json.readTree(l);
            } catch (Exception e) {
                throw new AssertionError(l, e);
            }
        }).toList();
        assertEquals(32, rows.size());
        // processor 0 at 1000, then processor 1's packets at 1010 and 1020, then processor 0 a second apart
        assertEquals(List.of(0, 1, 1, 0, 0), rows.subList(0, 5).stream().map(r -> r.get("cpu").asInt()).toList());
        assertEquals(List.of(1000L, 1010L, 1020L, 1000L + second), rows.subList(0, 4).stream().map(r -> r.get("timestamp").asLong()).toList());
        assertFalse(sw.err().contains("out of time order"), sw.err());
        CliRunner inspect = CliRunner.run("inspect", "--format", "json", f.toString());
        assertEquals(0, inspect.exit(), inspect.err());
        JsonNode report = json.readTree(inspect.out());
        assertEquals(0, report.get("expansion").get("switchesOutOfOrder").asLong());
        // the latest event before processor 1's buffer is at 1000 + 29 s; its batch's first switch at 1000
        assertEquals(29.0, report.get("lateness").get("byProcessor").get("1").get("seconds").asDouble(), 1e-9);
        assertEquals(29.0, report.get("lateness").get("maxSeconds").asDouble(), 1e-9);
        CliRunner table = CliRunner.run("inspect", f.toString());
        assertTrue(table.out().contains("processor 1: 29.000 s (buffer 2)"), table.out());
    }

    @Test
    void badOptionsAreOneLine() {
        Path f = generate("compact", 100);
        CliRunner r = CliRunner.run("stats", f.toString(), "--window", "soon");
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit());
        assertEquals("swapstream: --window: 'soon' is not a duration (for example 60s, 500ms, 5m, 7d)"
                + " (see 'swapstream stats --help')", r.err().strip());
        CliRunner by = CliRunner.run("stats", f.toString(), "--by", "colour");
        assertEquals(Swapstream.EXIT_BAD_INPUT, by.exit());
        assertEquals(1, by.err().strip().lines().count());
    }
}
