package io.swapstream.aggregate.streams;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** A session's progress as release 0.1.0 wrote it reads, and this build writes it byte for byte as 0.1.0 did. */
class AggregateSessionTest {
    private static byte[] stored(String name) throws Exception {
        try (InputStream in = AggregateSessionTest.class.getResourceAsStream("/state/0.1.0/" + name)) {
            return HexFormat.of().parseHex(new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip());
        }
    }

    @Test
    void readsWhatRelease010Wrote() throws Exception {
        AggregateSession live = AggregateSession.decode(stored("aggregate-session-live.hex"));
        assertEquals("web01", live.host);
        assertEquals(123456, live.switches);
        assertEquals(321, live.threads);
        assertEquals(-1, live.expectedSwitches);
        assertEquals(-1, live.expectedThreads);
        assertNull(live.endReason);
        assertFalse(live.done);
        assertEquals(40, live.batches);
        assertEquals(32, live.flushedBatches);
        assertEquals(65536, live.redoBytes);
        assertArrayEquals(new byte[] {1, 2, 3}, live.statistics);
        assertEquals(40, live.nextSequence);

        AggregateSession ended = AggregateSession.decode(stored("aggregate-session-ended.hex"));
        assertEquals("end-marker", ended.endReason);
        assertTrue(ended.done);
        assertEquals(200000, ended.expectedSwitches);
        assertEquals(400, ended.expectedThreads);
        assertEquals(2, ended.lateBatches);
        assertEquals(0, ended.statistics.length);
        assertEquals(1764300060000L, ended.endedMs);
    }

    @Test
    void writesWhatRelease010Reads() throws Exception {
        for (String name : new String[] {"aggregate-session-live.hex", "aggregate-session-ended.hex"}) {
            byte[] stored = stored(name);
            assertArrayEquals(stored, AggregateSession.decode(stored).encode(), name);
        }
    }
}
