package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProgressLineTest {
    /** An idle process looks at the same line every 10 s: printed once, then again only after the quiet span. */
    @Test
    void anUnchangedLineIsPrintedOnceAQuietSpanAndAChangedOneAtOnce() {
        ProgressLine.Repeats r = new ProgressLine.Repeats();
        List<String> printed = new ArrayList<>();
        for (int i = 0; i < 2 * ProgressLine.QUIET_LOOKS; i++) {
            String l = r.next("RUNNING; 0 switches in");
            if (l != null) printed.add(l);
        }
        assertEquals(List.of("RUNNING; 0 switches in", "RUNNING; 0 switches in"), printed);
        assertEquals("RUNNING; 5 switches in", r.next("RUNNING; 5 switches in"));
        assertEquals(null, r.next("RUNNING; 5 switches in"));
        assertEquals("RUNNING; 0 switches in", r.next("RUNNING; 0 switches in"));
    }
}
