package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
