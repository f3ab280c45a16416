package io.swapstream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PositionTest {
    @Test
    void aPositionReadsBackAsWritten() {
        IngestPosition p = new IngestPosition();
        p.path = "/traces/h.etl";
        p.nextIndex = 12;
        p.offset = 12 * 8192;
        p.ended = true;
        IngestPosition q = IngestPosition.decode(p.encode());
        assertEquals(p.path(), q.path());
        assertEquals(12, q.nextIndex());
        assertEquals(12 * 8192, q.offset());
        assertTrue(q.ended());
    }

    /** One format: a record of another version is refused, not read as something else. */
    @Test
    void anotherVersionIsRefused() {
        IngestPosition p = new IngestPosition();
        p.path = "/traces/h.etl";
        byte[] b = p.encode();
        b[0] = 2;
        assertThrows(IllegalStateException.class, () -> IngestPosition.decode(b));
    }
}
