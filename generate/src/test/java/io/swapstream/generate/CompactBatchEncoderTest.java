package io.swapstream.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The generator's batches against bytes worked out by hand from the layouts of docs/etw-formats.md §5. */
class CompactBatchEncoderTest {
    record Batch(int cpu, long flushTs, byte[] payload) {}

    /** 500 timer ticks of 15.625 ms at 10 MHz. */
    static final long MAX_AGE = 78_125_000L;

    final List<Batch> batches = new ArrayList<>();
    final CompactBatchEncoder enc = new CompactBatchEncoder(3, 0x28, MAX_AGE,
            (cpu, ts, p, len) -> batches.add(new Batch(cpu, ts, java.util.Arrays.copyOf(p, len))));

    static String hex(byte[] b, int from) {
        return HexFormat.of().formatHex(b, from, b.length);
    }

    @Test
    void packetsOfEveryKindByHand() {
        enc.onSwitch(1000, 0, 0, 0, 2, 0, 0);          // first switch: IdleShort, delta 0 → 0000
        enc.onSwitch(1010, 100, 10, 8, 5, 6, 1);       // Lite idx0 inc2 wr6 delta10: 2|0|2<<6|6<<9|10<<15 = 0x50C82
        enc.onSwitch(1035, 104, 12, 10, 1, 32, 3);     // Full (3 ticks): 3|25<<2 = 0x67; 1|0x29<<4|12<<10|3<<15 = 0x1B291
        enc.onSwitch(1035 + 20_000, 0, 0, 0, 2, 0, 0); // Idle, delta 20000 > 14 bits: 1|20000<<2 = 0x13881
        enc.flush(30_000);
        assertEquals(1, batches.size());
        Batch b = batches.get(0);
        assertEquals(3, b.cpu());
        assertEquals(30_000, b.flushTs(), "the event's timestamp is the flush time, not the last packet's");
        ByteBuffer v = ByteBuffer.wrap(b.payload()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1000, v.getLong(0));
        assertEquals(100, v.getInt(8));
        assertEquals(104, v.getInt(12));
        assertEquals(0, v.getInt(16));
        assertEquals(8, v.get(0x48));
        assertEquals(10, v.get(0x49));
        assertEquals("0000" + "820c0500" + "67000000" + "91b20100" + "81380100", hex(b.payload(), 0x58));
    }

    @Test
    void seventeenthThreadStartsANewBatch() {
        for (int i = 0; i < 17; i++) enc.onSwitch(100 + i, 1000 + 4 * i, 8, 8, 5, 6, 0);
        enc.flush(200);
        assertEquals(2, batches.size());
        assertEquals(116, batches.get(0).flushTs(), "flushed by the switch that did not fit");
        assertEquals(0x58 + 16 * 4, batches.get(0).payload().length);
        ByteBuffer second = ByteBuffer.wrap(batches.get(1).payload()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(116, second.getLong(0), "FirstTimeStamp is the new batch's first switch");
        assertEquals(1064, second.getInt(8));
        // Lite, idx 0, wr 6, delta 0: 2 | 6 << 9 = 0x0C02
        assertEquals("020c0000", hex(batches.get(1).payload(), 0x58));
    }

    @Test
    void aBatchNeverPassesTheKernelLimit() {
        for (int i = 0; i < 400; i++) enc.onSwitch(10L * i, 100, 8, 8, 1, 0, 5); // Full packets, 8 bytes each
        enc.flush(4000);
        for (Batch b : batches) assertEquals(true, b.payload().length <= 0x400);
        assertEquals((0x400 - 0x58) / 8, (batches.get(0).payload().length - 0x58) / 8);
        int packets = batches.stream().mapToInt(b -> (b.payload().length - 0x58) / 8).sum();
        assertEquals(400, packets);
    }

    @Test
    void priorityOutsideTheLiteRangeUsesFull() {
        enc.onSwitch(0, 100, 4, 8, 5, 6, 0); // priority below base: inc would be negative
        enc.flush(1);
        // Full: 3 | 0 << 2; idx 0 | wr 6 << 4 | prio 4 << 10 | 0 = 0x1060
        assertEquals("03000000" + "60100000", hex(batches.get(0).payload(), 0x58));
    }

    @Test
    void aBatchOlderThanTheMaximumAgeIsLoggedAtTheNextSwitchOrFlushTimer() {
        enc.onSwitch(1000, 100, 8, 8, 5, 6, 0);
        enc.onSwitch(1000 + MAX_AGE, 104, 8, 8, 5, 6, 0);      // exactly the maximum age: same batch
        enc.onSwitch(1000 + MAX_AGE + 1, 108, 8, 8, 5, 6, 0);  // older than it: logged now, a new batch starts
        assertEquals(1, batches.size());
        assertEquals(1000 + MAX_AGE + 1, batches.get(0).flushTs());
        assertEquals(0x58 + 4 + 8, batches.get(0).payload().length, "a Lite packet, then a Full one: the delta needs 30 bits");
        enc.flushIfOlder(1000 + 2 * MAX_AGE + 1);                // the flush timer: not older yet
        assertEquals(1, batches.size());
        enc.flushIfOlder(1000 + 2 * MAX_AGE + 2);                // now it is, without another switch
        assertEquals(2, batches.size());
        assertEquals(1000 + 2 * MAX_AGE + 2, batches.get(1).flushTs());
        ByteBuffer second = ByteBuffer.wrap(batches.get(1).payload()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1000 + MAX_AGE + 1, second.getLong(0));
    }
}
