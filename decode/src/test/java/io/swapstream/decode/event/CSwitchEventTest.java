package io.swapstream.decode.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.KernelEnums;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The two real CSwitch payloads of docs/etw-formats.md §4, inside PERFINFO64 and PERFINFO32 events. */
class CSwitchEventTest {
    // NewThreadId 2252 (0x8CC), OldThreadId 0, NewPri 8, OldPri 0, PreviousCState 1, decrement 0,
    // WaitReason 0, WaitMode 0, State 2 (Running), IdealProcessor 4, NewThreadWaitTime 1, quantum 0
    static final String PAYLOAD = "cc080000" + "00000000" + "08" + "00" + "01" + "00" + "00" + "00" + "02" + "04"
            + "01000000" + "00000000";

    static List<CSwitchEvent> decodeIn(int marker) {
        byte[] payload = HexFormat.of().parseHex(PAYLOAD);
        ByteBuffer b = ByteBuffer.allocate(0x200).order(ByteOrder.LITTLE_ENDIAN);
        int size = 0x10 + payload.length;
        b.putInt(0, 0x200).putInt(0x30, 0x48 + size).putShort(0x34, (short) 0x20).putShort(0x36, (short) 2);
        b.putInt(0x48, marker).putShort(0x4C, (short) size).putShort(0x4E, (short) 0x0524).putLong(0x50, 99);
        b.put(0x58, payload);
        BufferDecoder dec = new BufferDecoder();
        dec.load("cswitch", 0, b.array(), 0, 0x200);
        List<CSwitchEvent> out = new ArrayList<>();
        dec.walk(ev -> {
            assertEquals(0x0524, ev.hookId());
            out.add(CSwitchEvent.decode(ev.data(), ev.payloadOffset(), ev.payloadLength()));
        });
        return out;
    }

    static void assertStatedValues(CSwitchEvent c) {
        assertEquals(2252, c.newThreadId());
        assertEquals(0, c.oldThreadId());
        assertEquals(8, c.newThreadPriority());
        assertEquals(1, c.previousCState());
        assertEquals(2, c.oldThreadState());
        assertEquals("Running", KernelEnums.threadState(c.oldThreadState()));
        assertEquals(4, c.oldThreadIdealProcessor());
        assertEquals(1, c.newThreadWaitTime());
    }

    @Test
    void sixtyFourBitPayload() {
        List<CSwitchEvent> got = decodeIn(0xC0110004);
        assertEquals(1, got.size());
        assertStatedValues(got.get(0));
    }

    @Test
    void thirtyTwoBitPayload() {
        List<CSwitchEvent> got = decodeIn(0xC0100002);
        assertEquals(1, got.size());
        assertStatedValues(got.get(0));
    }

    @Test
    void signedAndFlagFields() {
        byte[] p = HexFormat.of().parseHex("01000000" + "02000000" + "0f" + "fe" + "00" + "ff" + "0f" + "03" + "05" + "00"
                + "ffffffff" + "f6ffffff" + "abcdabcd");
        CSwitchEvent c = CSwitchEvent.decode(ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN), 0, p.length);
        assertEquals(15, c.newThreadPriority());
        assertEquals(-2, c.oldThreadPriority());
        assertEquals(-1, c.newThreadPriorityDecrement());
        assertEquals(15, c.oldThreadWaitReason());
        assertEquals(1, c.oldThreadWaitMode(), "from 1703 bit 0 of a flags byte");
        assertEquals(4294967295L, c.newThreadWaitTime());
        assertEquals(-10, c.oldThreadRemainingQuantum());
    }

    @Test
    void shortPayloadIsMalformed() {
        ByteBuffer b = ByteBuffer.allocate(0x17).order(ByteOrder.LITTLE_ENDIAN);
        assertThrows(MalformedEventException.class, () -> CSwitchEvent.decode(b, 0, 0x17));
    }
}
