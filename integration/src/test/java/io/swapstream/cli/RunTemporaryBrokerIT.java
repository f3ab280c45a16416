package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run} without a broker: its own temporary one, where it computes whole-session rows alone (no windows
 * nobody reads) on one partition a topic unless --partitions is given.
 */
class RunTemporaryBrokerIT {
    @TempDir Path dir;

    @Test
    void runOnItsOwnBrokerPrintsTheWholeSessionRowsOfStats() throws Exception {
        Assumptions.assumeTrue(System.getenv("KAFKA_BOOTSTRAP") == null || System.getenv("KAFKA_BOOTSTRAP").isBlank(),
                "KAFKA_BOOTSTRAP is set: run would use that broker, not a temporary one");
        Path f = dir.resolve("trace.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        CliRunner run = CliRunner.run("run", f.toString(), "--format", "jsonl");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.err().contains("started an in-JVM Kafka broker"), run.err());
        java.util.Set<Object> e = PipelineIT.jsonRows(CliRunner.run("stats", f.toString(), "--format", "jsonl"));
        assertTrue(e.size() > 10);
        assertEquals(e, PipelineIT.jsonRows(run));
    }

    /**
     * A file cut off mid-buffer, as a crashed host leaves it: stats refuses it, and run, which publishes what
     * precedes the cut, prints none of its rows (its times past the earliest processor's end would count what is
     * missing) and exits as stats does.
     */
    @Test
    void runPrintsNoRowsOfATruncatedTraceAsStatsRefusesIt() throws Exception {
        Assumptions.assumeTrue(System.getenv("KAFKA_BOOTSTRAP") == null || System.getenv("KAFKA_BOOTSTRAP").isBlank(),
                "KAFKA_BOOTSTRAP is set: run would use that broker, not a temporary one");
        Path f = dir.resolve("cut.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "6000", "--buffer-size", "16").exit());
        byte[] b = java.nio.file.Files.readAllBytes(f);
        java.nio.file.Files.write(f, java.util.Arrays.copyOf(b, b.length / 2 + 1000));
        assertEquals(Swapstream.EXIT_BAD_INPUT, CliRunner.run("stats", f.toString()).exit());
        CliRunner run = CliRunner.run("run", f.toString(), "--format", "jsonl");
        assertEquals(Swapstream.EXIT_BAD_INPUT, run.exit(), run.err());
        assertEquals("", run.out().strip(), "no rows");
        assertTrue(run.err().contains("is incomplete: its rows are not printed"), run.err());
    }

    @Test
    void theAggregateWindowsOnlyWhereOthersCanReadTheRows() {
        assertEquals(0, RunCommand.aggregateWindow(0, true));
        assertEquals(RunCommand.DEFAULT_WINDOW_NANOS, RunCommand.aggregateWindow(0, false));
        assertEquals(1_000_000_000L, RunCommand.aggregateWindow(1_000_000_000L, true));
    }
}
