package io.swapstream.decode.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.swapstream.etw.KernelEnums;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Batches built bit by bit from the layouts of docs/etw-formats.md §5; every expected value below was
 * computed by hand from the bit positions, not by an encoder.
 */
class CompactBatchDecoderTest {

    record Sw(int kind, long ts, int tid, int pri, int state, int reason, int waitTicks, int index) {}

    static ByteBuffer batch(long first, String packetsHex) {
        byte[] packets = HexFormat.of().parseHex(packetsHex);
        ByteBuffer b = ByteBuffer.allocate(CompactBatchDecoder.HEADER_SIZE + packets.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, first);
        for (int i = 0; i < 16; i++) {
            b.putInt(8 + 4 * i, 1000 + 4 * i);       // TidTable[i] = 1000 + 4i
            b.put(0x48 + i, (byte) (i % 16));         // ThreadBasePriority[i] = i
        }
        b.put(CompactBatchDecoder.HEADER_SIZE, packets);
        return b;
    }

    static List<Sw> decode(ByteBuffer b, int max) {
        List<Sw> out = new ArrayList<>();
        CompactBatchDecoder.decode(b, 0, b.capacity(), max,
                (k, ts, tid, pri, st, wr, w, i) -> out.add(new Sw(k, ts, tid, pri, st, wr, w, i)));
        return out;
    }

    @Test
    void everyPacketKind() {
        String packets = ""
                // IdleShort, delta 0x3FFF: (0x3FFF << 2) | 0 = 0xFFFC
                + "fcff"
                // Idle, delta 1: (1 << 2) | 1 = 0x00000005
                + "05000000"
                // Lite: type 2 | index 5 << 2 | inc 3 << 6 | stateWr 0x0F << 9 | delta 100 << 15 = 0x00321ED6
                + "d61e3200"
                // Full: u32#1 = 3 | 0x12345 << 2 = 0x00048D17
                //       u32#2 = index 15 | stateWr 0x29 << 4 | priority 31 << 10 | wait 0x1FFFF << 15 = 0xFFFFFE9F
                + "178d0400" + "9ffeffff";
        List<Sw> got = decode(batch(1_000_000, packets), 0x27);
        assertEquals(4, got.size());
        assertEquals(new Sw(CompactBatchDecoder.IDLE_SHORT, 1_000_000 + 0x3FFF, 0, -1, -1, -1, -1, -1), got.get(0));
        assertEquals(new Sw(CompactBatchDecoder.IDLE, 1_000_000 + 0x3FFF + 1, 0, -1, -1, -1, -1, -1), got.get(1));
        // Lite: TID 1000 + 4*5 = 1020, priority base 5 + 3 = 8, WrQueue (15) so Waiting, wait 1 tick
        assertEquals(new Sw(CompactBatchDecoder.LITE, 1_000_000 + 0x3FFF + 1 + 100, 1020, 8, 5, 15, 1, 5), got.get(2));
        // Full under 0x27: 0x29 - 0x27 = 2, Running
        assertEquals(new Sw(CompactBatchDecoder.FULL, 1_000_000 + 0x3FFF + 1 + 100 + 0x12345, 1060, 31, 2, -1, 0x1FFFF, 15),
                got.get(3));
    }

    @Test
    void sixteenEntryTidTableAndPriorityIncrements() {
        StringBuilder hex = new StringBuilder();
        for (int index = 0; index < 16; index++) {
            int inc = index % 8;
            // Lite: 2 | index << 2 | inc << 6 | stateWr 0x27+1 (Ready under 0x27) << 9 | delta 1 << 15
            int v = 2 | index << 2 | inc << 6 | 0x28 << 9 | 1 << 15;
            hex.append(String.format("%02x%02x%02x%02x", v & 0xFF, v >>> 8 & 0xFF, v >>> 16 & 0xFF, v >>> 24 & 0xFF));
        }
        List<Sw> got = decode(batch(0, hex.toString()), 0x27);
        for (int index = 0; index < 16; index++) {
            Sw s = got.get(index);
            assertEquals(1000 + 4 * index, s.tid());
            assertEquals(index + index % 8, s.pri());
            assertEquals(1, s.state(), "0x28 - 0x27 = 1, Ready");
            assertEquals(index + 1, s.ts());
        }
    }

    @Test
    void literalLitePacketWithBaseFifteenAndIncrementSeven() {
        // Lite: 2 | 15 << 2 | 7 << 6 | 0 << 9 | 0 << 15 = 0x1FE: Executive wait, priority 15 + 7 = 22
        List<Sw> got = decode(batch(5, "fe010000"), 0x2A);
        assertEquals(new Sw(CompactBatchDecoder.LITE, 5, 1060, 22, 5, 0, 1, 15), got.get(0));
    }

    @Test
    void everyStateWrUnderEveryMaximumWaitReason() {
        for (int max : new int[] {0x27, 0x28, 0x2A, 0x2B}) {
            for (int wr = 0; wr < 64; wr++) {
                // Full: u32#1 = 3 (delta 0); u32#2 = index 0 | wr << 4 | priority 9 << 10 | wait 2 << 15
                int v2 = wr << 4 | 9 << 10 | 2 << 15;
                String hex = "03000000" + String.format("%02x%02x%02x%02x", v2 & 0xFF, v2 >>> 8 & 0xFF, v2 >>> 16 & 0xFF, v2 >>> 24);
                Sw s = decode(batch(0, hex), max).get(0);
                if (wr < max) {
                    assertEquals(5, s.state(), "wr " + wr + " under " + max);
                    assertEquals(wr, s.reason());
                } else {
                    assertEquals(wr - max, s.state(), "wr " + wr + " under " + max);
                    assertEquals(-1, s.reason());
                }
                assertEquals(9, s.pri());
                assertEquals(2, s.waitTicks());
            }
        }
    }

    @Test
    void namedBoundaryCases() {
        // 0x27 is WrPhysicalFault from build 19041 (max 0x28) but Initialized (state 0) on 1607 (max 0x27)
        int v2 = 0x27 << 4;
        String hex = "03000000" + String.format("%02x%02x%02x%02x", v2 & 0xFF, v2 >>> 8 & 0xFF, v2 >>> 16 & 0xFF, v2 >>> 24);
        assertEquals(0, decode(batch(0, hex), MaximumWaitReason.forBuild(14393)).get(0).state());
        Sw win10 = decode(batch(0, hex), MaximumWaitReason.forBuild(19041)).get(0);
        assertEquals("WrPhysicalFault", KernelEnums.waitReason(win10.reason()));
        // Terminated under Windows 11 (0x2A): 0x2A + 4 = 0x2E
        int t = 0x2E << 4;
        String th = "03000000" + String.format("%02x%02x%02x%02x", t & 0xFF, t >>> 8 & 0xFF, t >>> 16 & 0xFF, t >>> 24);
        assertEquals("Terminated", KernelEnums.threadState(decode(batch(0, th), MaximumWaitReason.forBuild(22621)).get(0).state()));
    }

    @Test
    void maximumWaitReasonByBuild() {
        assertEquals(0x27, MaximumWaitReason.forBuild(7601));
        assertEquals(0x27, MaximumWaitReason.forBuild(14393));
        assertEquals(0x28, MaximumWaitReason.forBuild(14394));
        assertEquals(0x28, MaximumWaitReason.forBuild(19041));
        assertEquals(0x2A, MaximumWaitReason.forBuild(22000));
        assertEquals(0x2A, MaximumWaitReason.forBuild(26099));
        assertEquals(0x2B, MaximumWaitReason.forBuild(26100));
    }

    @Test
    void packetRunningPastTheBatchIsMalformed() {
        // a Full packet's first byte, then only 3 more bytes
        assertThrows(MalformedEventException.class, () -> decode(batch(0, "03000000" + "000000"), 0x27));
        assertThrows(MalformedEventException.class, () -> decode(batch(0, "02"), 0x27));
    }
}
