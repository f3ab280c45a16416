package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 32-bit layout, built by hand from the off32 column of docs/etw-formats.md §3. */
class LogfileHeaderTest {

    @Test
    void thirtyTwoBitLayout() {
        byte[] names = "Kernel\0C:\\t.etl\0".getBytes(StandardCharsets.UTF_16LE);
        int payload = 0x110 + names.length;
        int size = 0x20 + payload;
        ByteBuffer b = ByteBuffer.allocate(0x1000).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 0x1000).putInt(0x30, 0x48 + size).putShort(0x34, (short) 0x20).putShort(0x36, (short) 4);
        int e = 0x48;
        b.putInt(e, 0xC0010002).putShort(e + 4, (short) size).putShort(e + 6, (short) 0).putLong(e + 0x10, 777);
        int p = e + 0x20;
        b.putInt(p, 0x1000).put(p + 4, (byte) 6).put(p + 5, (byte) 1);
        b.putInt(p + 8, 7601).putInt(p + 0x0C, 2).putLong(p + 0x10, 555).putInt(p + 0x18, 156001);
        b.putInt(p + 0x20, 0x10001).putInt(p + 0x24, 9).putInt(p + 0x2C, 4).putInt(p + 0x30, 11).putInt(p + 0x34, 2400);
        b.putLong(p + 0xF0, 111).putLong(p + 0xF8, 2_337_929).putLong(p + 0x100, 222).putInt(p + 0x108, 1).putInt(p + 0x10C, 3);
        b.put(p + 0x110, names);
        BufferDecoder dec = new BufferDecoder();
        dec.load("t32", 0, b.array(), 0, 0x1000);
        List<LogfileHeader> got = new ArrayList<>();
        List<TraceHeaderType> types = new ArrayList<>();
        dec.walk(ev -> {
            types.add(ev.headerType());
            got.add(LogfileHeader.parse(ev, dec));
        });
        LogfileHeader h = got.get(0);
        assertEquals(List.of(TraceHeaderType.SYSTEM32), types, "marker 0xC001xxxx: a SYSTEM32 header, read with 4-byte pointers");
        assertEquals(7601, h.build());
        assertEquals(2, h.numberOfProcessors());
        assertEquals(555, h.endTime());
        assertEquals(0x10001, h.logFileMode());
        assertEquals(9, h.buffersWritten());
        assertEquals(4, h.pointerSize());
        assertEquals(11, h.eventsLost());
        assertEquals(2400, h.cpuSpeedInMHz());
        assertEquals(111, h.bootTime());
        assertEquals(2_337_929, h.perfFreq());
        assertEquals(222, h.startTime());
        assertEquals(1, h.clockType());
        assertEquals(3, h.buffersLost());
        assertEquals("Kernel", h.loggerName());
        assertEquals("C:\\t.etl", h.logFileName());
        assertEquals(777, h.timestamp());
    }
}
