package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.etw.EtlWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each command given bad values: one line naming the option or file and what is allowed, status 2,
 * and nothing of Java's (class names, stack traces) in it. Kafka that cannot be reached: status 1
 * and a line saying why. Checked before any work starts, so no broker is needed here.
 */
class BadValuesTest {
    @TempDir static Path dir;
    static Path trace;

    @BeforeAll
    static void trace() {
        trace = dir.resolve("t.etl");
        assertEquals(0, CliRunner.run("generate", "-o", trace.toString(), "--switches", "300").exit());
    }

    record Case(String expected, int exit, String... args) {}

    static List<Case> cases() {
        String t = trace.toString();
        String missing = dir.resolve("missing.etl").toString();
        String d = dir.toString();
        List<Case> c = new ArrayList<>();
        for (String cmd : List.of("stats", "switches", "inspect", "run", "ingest")) {
            c.add(new Case(missing + ": no such file", 2, cmd, missing, "-b", "127.0.0.1:1"));
            c.add(new Case(d + ": is a directory, not an .etl file", 2, cmd, d, "-b", "127.0.0.1:1"));
        }
        c.replaceAll(x -> x.args()[0].matches("stats|switches|inspect")
                ? new Case(x.expected(), x.exit(), x.args()[0], x.args()[1]) : x);
        c.add(new Case("--top must be at least 1, not -1", 2, "stats", t, "--top", "-1"));
        c.add(new Case("--top must be at least 1, not 0", 2, "run", t, "--top", "0"));
        // a window of 0 is the whole session wherever a window is taken; where only windows make sense, refused
        c.add(new Case("--window: --group process rolls up windows: give one of more than 0", 2, "stats", t, "--group", "process",
                "--window", "0s"));
        c.add(new Case("--window must be 0 (the whole session) or more, not -5s", 2, "stats", t, "--window", "-5s"));
        c.add(new Case("--window: 'soon' is not a duration", 2, "stats", t, "--window", "soon"));
        c.add(new Case("--window must be 0 (the whole session) or more, not -1s", 2, "run", t, "--window", "-1s"));
        c.add(new Case("--window must be 0 (the whole session) or more, not -1s", 2, "aggregate", "-b", "127.0.0.1:1", "--window", "-1s"));
        c.add(new Case("--idle-timeout: 'PT' is not a duration", 2, "decode", "-b", "127.0.0.1:1", "--idle-timeout", "PT"));
        c.add(new Case("--max-lateness must be more than 0, not 0s", 2, "decode", "-b", "127.0.0.1:1", "--max-lateness", "0s"));
        String node = dir.resolve("node").toString();
        c.add(new Case("a cluster node needs --node-id, --controller-port and --controllers together", 2, "broker", "--data-dir", node,
                "--node-id", "1"));
        c.add(new Case("--controllers does not name node 4", 2, "broker", "--data-dir", node, "--node-id", "4", "--controller-port",
                "9093", "--controllers", "1@127.0.0.1:9093"));
        c.add(new Case("--controllers: 'one' is not ID@HOST:PORT", 2, "broker", "--data-dir", node, "--node-id", "1",
                "--controller-port", "9093", "--controllers", "one"));
        String out = dir.resolve("g.etl").toString();
        c.add(new Case("--flush-timer: 'soon' is not a duration", 2, "generate", "-o", out, "--flush-timer", "soon"));
        c.add(new Case("--idle-cpu: '1:5' is not CPU:START:SECONDS (for example 1:5:40)", 2, "generate", "-o", out, "--idle-cpu", "1:5"));
        c.add(new Case("--idle-cpu: processor 9 is not one of the 4 that run threads", 2, "generate", "-o", out, "--idle-cpu", "9:5:40"));
        c.add(new Case("--emit-interval must be more than 0, not 0ms", 2, "aggregate", "-b", "127.0.0.1:1", "--emit-interval", "0ms"));
        c.add(new Case("--timeout must be more than 0, not 0s", 2, "run", t, "--timeout", "0s"));
        c.add(new Case("--connect-timeout must be more than 0, not 0s", 2, "ingest", t, "-b", "127.0.0.1:1", "--connect-timeout", "0s"));
        c.add(new Case("--by: cannot sort by 'colour'", 2, "stats", t, "--by", "colour"));
        c.add(new Case("--top: 'abc' is not an int", 2, "stats", t, "--top", "abc"));
        c.add(new Case("--format: expected one of [jsonl, csv]", 2, "switches", t, "--format", "xml"));
        c.add(new Case("--max-wait-reason must be between 1 and 0x3F, not 0x99", 2, "stats", t, "--max-wait-reason", "0x99"));
        c.add(new Case("--max-wait-reason: 'many' is not a number", 2, "inspect", t, "--max-wait-reason", "many"));
        c.add(new Case("--switches must be at least 1, not -5", 2, "generate", "-o", dir.resolve("g.etl").toString(), "--switches", "-5"));
        c.add(new Case("--rounds must be at least 1, not 0", 2, "bench", "--rounds", "0"));
        c.add(new Case("--http: 'localhost': expected HOST:PORT", 2, "aggregate", "-b", "127.0.0.1:1", "--http", "localhost"));
        c.add(new Case("--http: '127.0.0.1:99999': the port must be 0 to 65535", 2, "decode", "-b", "127.0.0.1:1", "--http", "127.0.0.1:99999"));
        c.add(new Case("--http-advertised: 'agg1': expected HOST:PORT", 2, "aggregate", "-b", "127.0.0.1:1", "--http-advertised", "agg1"));
        c.add(new Case("--switches must be at least 1, not 0", 2, "bench", "--switches", "0"));
        c.add(new Case("--cpus must be at least 1, not 0", 2, "generate", "-o", dir.resolve("g.etl").toString(), "--cpus", "0"));
        c.add(new Case("--exit-rate must be between 0.0 and 1.0, not 2.0", 2, "generate", "-o", dir.resolve("g.etl").toString(), "--exit-rate", "2"));
        c.add(new Case("--pmc: PMC counters ride on CSwitch events", 2, "generate", "-o", dir.resolve("g.etl").toString(), "--pmc", "2"));
        c.add(new Case("--silent-cpus must leave at least one of the 4 processors running, not 4", 2, "generate", "-o",
                dir.resolve("g.etl").toString(), "--silent-cpus", "4"));
        c.add(new Case("--out: cannot create the folder " + trace.resolve("dir"), 2, "generate", "-o", trace.resolve("dir/x.etl").toString()));
        c.add(new Case("--out: directory /nonexistent/dir does not exist", 2, "run", t, "--out", "/nonexistent/dir/s.jsonl"));
        c.add(new Case("--bootstrap-servers: 'kafka' is not HOST:PORT", 2, "ingest", t, "-b", "kafka"));
        c.add(new Case("--partitions must be at least 1, not 0", 2, "decode", "-b", "127.0.0.1:1", "--partitions", "0"));
        c.add(new Case("no Kafka: give --bootstrap-servers HOST:PORT or set KAFKA_BOOTSTRAP", 2, "decode"));
        c.add(new Case("Missing required parameter: 'FILE.etl'", 2, "stats"));
        c.add(new Case("Unknown option: '--colour'", 2, "inspect", t, "--colour"));
        return c;
    }

    /**
     * Kafka that does not answer is not the user's input: status 1. The first refusal is named at once, in one line; the
     * command still tries until --connect-timeout, then says why it gave up.
     */
    @TestFactory
    Stream<DynamicTest> anUnreachableBrokerIsNamedAtOnceAndWaitedFor() {
        String t = dir.resolve("t.etl").toString();
        return Stream.of(new String[] {"ingest", t}, new String[] {"decode"}, new String[] {"run", t}, new String[] {"tail", "sessions"})
                .map(cmd -> DynamicTest.dynamicTest(cmd[0], () -> {
                    List<String> args = new java.util.ArrayList<>(List.of(cmd));
                    args.addAll(List.of("-b", "127.0.0.1:1", "--connect-timeout", "1s"));
                    CliRunner r = CliRunner.run(args.toArray(String[]::new));
                    List<String> lines = r.err().strip().lines().toList();
                    assertEquals(1, r.exit(), r.err());
                    assertEquals(2, lines.size(), r.err());
                    assertTrue(lines.get(0).startsWith("swapstream: cannot reach Kafka at 127.0.0.1:1 yet: 127.0.0.1:1 refused the connection;"
                            + " trying again for up to"), lines.get(0));
                    assertEquals("swapstream: cannot reach Kafka at 127.0.0.1:1: 127.0.0.1:1 refused the connection (waited 1.0 s; see"
                            + " --connect-timeout)", lines.get(1), "tried until the timeout");
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyBadValueIsOneLineWithItsStatus() {
        return cases().stream().map(c -> DynamicTest.dynamicTest(String.join(" ", c.args()), () -> {
            CliRunner r = CliRunner.run(c.args());
            String err = r.err().strip();
            assertEquals(c.exit(), r.exit(), err);
            assertEquals("", r.out());
            assertFalse(err.contains("\n"), "one line: " + err);
            assertTrue(err.startsWith("swapstream: "), err);
            assertTrue(err.contains(c.expected()), err);
            for (String java : List.of("Exception", "java.", "io.swapstream", "\tat ", "org.apache")) {
                assertFalse(err.contains(java), "no Java internals: " + err);
            }
        }));
    }

    /** ingest --watch and generate -o make the folder the README's commands name, rather than refuse it. */
    @Test
    void aMissingWatchFolderOrOutputFolderIsCreated() throws Exception {
        Path traces = dir.resolve("traces");
        CliRunner r = CliRunner.run("ingest", "--watch", traces.toString(), "-b", "127.0.0.1:1", "--connect-timeout", "1s");
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().startsWith("swapstream ingest: created " + traces + ", which did not exist\n"), r.err());
        assertTrue(java.nio.file.Files.isDirectory(traces));
        Path out = dir.resolve("new/deeper/g.etl");
        r = CliRunner.run("generate", "-o", out.toString(), "--switches", "100");
        assertEquals(0, r.exit(), r.err());
        assertTrue(java.nio.file.Files.size(out) > 0);
    }

    @Test
    void aTraceWithoutContextSwitchesGetsANoteAndItsOwnExitStatus() throws Exception {
        Path f = dir.resolve("no-switches.etl");
        try (EtlWriter w = new EtlWriter(f, EtlWriter.Session.defaults(2, 132223104000000000L), 1000)) {
            ByteBuffer thread = ByteBuffer.allocate(72).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 40).putInt(4, 300);
            w.systemEvent(1, 0x0503, 3, 300, 40, 1500, thread.array());
        }
        for (String cmd : List.of("stats", "switches")) {
            CliRunner r = CliRunner.run(cmd, f.toString());
            // a script tells a logger run without CSWITCH from a quiet machine by the status
            assertEquals(Swapstream.EXIT_NO_SWITCHES, r.exit(), r.err());
            assertEquals("", r.out());
            assertEquals("swapstream: note: " + f + " holds no context switches: it has no CSwitch (0x0524) or compact-batch"
                    + " (0x0525) events; the kernel logger writes them only with the CSWITCH flag", r.err().strip());
        }
    }
}
