package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.local.UserInputException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class OptionsTest {
    /** Both notations: a number with a unit suffix, and ISO-8601, whose last letter is a unit too. */
    @Test
    void durationsTakeSuffixesAndIso8601() {
        assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
        assertEquals(Duration.ofSeconds(60), Durations.parse("60s"));
        assertEquals(Duration.ofMinutes(5), Durations.parse("5m"));
        assertEquals(Duration.ofHours(1), Durations.parse("1h"));
        assertEquals(Duration.ofDays(7), Durations.parse("7d"));
        assertEquals(Duration.ofHours(1), Durations.parse("PT1H"));
        assertEquals(Duration.ofDays(1), Durations.parse("P1D"));
        assertEquals(Duration.ofMillis(1500), Durations.parse("PT1.5S"));
        assertThrows(TypeConversionException.class, () -> Durations.parse("soon"));
        assertThrows(TypeConversionException.class, () -> new Durations.Positive().convert("-5s"));
        assertThrows(TypeConversionException.class, () -> new Durations.Positive().convert("0s"));
        // a window of 0 is the whole session
        assertEquals(Duration.ZERO, new Durations.Window().convert("0s"));
        assertThrows(TypeConversionException.class, () -> new Durations.Window().convert("-1s"));
    }

    /** picocli's line for a value a converter refused, as the commands' other lines: the option, then why. */
    @Test
    void aRefusedValueNamesItsOption() {
        assertEquals("--poll must be more than 0, not 0s", Durations.optionLine("Invalid value for option '--poll': must be more than 0, not 0s"));
        assertEquals("--poll: 'x' is not a duration (for example 60s, 500ms, 5m, 7d)",
                Durations.optionLine("Invalid value for option '--poll': 'x' is not a duration (for example 60s, 500ms, 5m, 7d)"));
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
