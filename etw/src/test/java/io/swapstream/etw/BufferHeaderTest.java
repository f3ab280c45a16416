package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class BufferHeaderTest {
    static ByteBuffer header(int rawProcessor, int flags) {
        ByteBuffer b = ByteBuffer.allocate(0x48).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 0x10000).putLong(0x10, 1234).putLong(0x18, 7);
        b.putShort(0x28, (short) rawProcessor).putShort(0x2A, (short) 3);
        b.putInt(0x30, 0x200).putShort(0x34, (short) flags).putShort(0x36, (short) 2);
        return b;
    }

    @Test
    void win7ProcessorIsTheLowByte() {
        BufferHeader h = BufferHeader.read(header(0x0805, 0), 0, 0);
        assertEquals(5, h.processor());
    }

    @Test
    void win8ProcessorIndexHasElevenBits() {
        BufferHeader h = BufferHeader.read(header(0xF123, BufferHeader.FLAG_PROC_INDEX | BufferHeader.FLAG_EVENTS_LOST), 0, 0);
        assertEquals(0x123, h.processor());
        assertTrue(h.eventsLost());
        assertEquals("EVENTS_LOST|PROC_INDEX", BufferHeader.flagNames(h.flags()));
        assertEquals("CTX_SWAP", BufferHeader.typeName(h.type()));
        assertEquals(0x200, h.fillMark());
        assertEquals(7, h.sequenceNumber());
    }
}
