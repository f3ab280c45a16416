package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.local.UserInputException;
import org.junit.jupiter.api.Test;

class OptionsTest {
    /** Both notations: a number with a unit suffix, and ISO-8601, whose last letter is a unit too. */
    @Test
    void durationsTakeSuffixesAndIso8601() {
        assertEquals(500_000_000L, Options.duration("--d", "500ms"));
        assertEquals(60_000_000_000L, Options.duration("--d", "60s"));
        assertEquals(300_000_000_000L, Options.duration("--d", "5m"));
        assertEquals(3_600_000_000_000L, Options.duration("--d", "1h"));
        assertEquals(7 * 86_400_000_000_000L, Options.duration("--d", "7d"));
        assertEquals(3_600_000_000_000L, Options.duration("--d", "PT1H"));
        assertEquals(86_400_000_000_000L, Options.duration("--d", "P1D"));
        assertEquals(1_500_000_000L, Options.duration("--d", "PT1.5S"));
        assertEquals(0, Options.duration("--d", null));
        assertThrows(UserInputException.class, () -> Options.duration("--d", "soon"));
        assertThrows(UserInputException.class, () -> Options.positiveDuration("--d", "-5s"));
    }

    /** A host that would make session ids ambiguous, or break the keys built on them, is refused in one line naming where it came from. */
    @Test
    void aHostWithAColonSlashOrPercentIsRefused() throws Exception {
        assertEquals("web01", Options.host(null, java.nio.file.Path.of("/t/web01.etl")));
        var e = assertThrows(UserInputException.class, () -> Options.host("db:07", java.nio.file.Path.of("/t/x.etl")));
        assertEquals("--host: host name 'db:07' holds ':', which session ids reserve (give another with --host)", e.getMessage());
        e = assertThrows(UserInputException.class, () -> Options.host(null, java.nio.file.Path.of("/t/a%2Fb.etl")));
        assertTrue(e.getMessage().startsWith("/t/a%2Fb.etl: host name 'a%2Fb' holds '%'"), e.getMessage());
        java.nio.file.Path f = java.nio.file.Files.createTempFile("web01", ".etl");
        CliRunner r = CliRunner.run("ingest", "--host", "a/b", "-b", "127.0.0.1:1", f.toString());
        java.nio.file.Files.delete(f);
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), r.err());
        assertTrue(r.err().strip().contains("host name 'a/b' holds '/'") && !r.err().strip().contains("\n"), r.err());
    }
}
