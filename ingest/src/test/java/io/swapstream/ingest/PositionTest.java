package io.swapstream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import org.junit.jupiter.api.Test;

class PositionTest {
    @Test
    void aPositionKeepsWhereItsTransactionStartedAndWhereItsLastRecordWent() {
        DirectoryIngest.Position p = new DirectoryIngest.Position();
        p.path = "/traces/h.etl";
        p.nextIndex = 12;
        p.offset = 12 * 8192;
        p.ended = true;
        p.prevIndex = 7;
        p.prevOffset = 7 * 8192;
        p.txn = 3;
        p.lastPartition = 1;
        p.lastOffset = 4711;
        DirectoryIngest.Position q = DirectoryIngest.Position.decode(p.encode());
        assertEquals(p.path(), q.path());
        assertEquals(12, q.nextIndex());
        assertEquals(12 * 8192, q.offset());
        assertTrue(q.ended());
        assertEquals(7, q.prevIndex);
        assertEquals(7 * 8192, q.prevOffset);
        assertEquals(3, q.txn);
        assertEquals(1, q.lastPartition);
        assertEquals(4711, q.lastOffset);
    }

    @Test
    void aVersionOnePositionIsReadWithNothingToLookFor() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(b)) {
            o.writeByte(1);
            o.writeUTF("/traces/h.etl");
            o.writeLong(5);
            o.writeLong(40960);
            o.writeBoolean(false);
        }
        DirectoryIngest.Position q = DirectoryIngest.Position.decode(b.toByteArray());
        assertEquals(5, q.nextIndex());
        assertEquals(40960, q.offset());
        assertFalse(q.ended());
        assertEquals(5, q.prevIndex, "goes on where it stood");
        assertEquals(40960, q.prevOffset);
        assertEquals(0, q.txn);
        assertEquals(-1, q.lastOffset, "no record to look for");
    }
}
