package io.swapstream.decode;

import static io.swapstream.decode.TinyTrace.ns;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A two-processor trace written by hand, with every expected field worked out on paper
 * (build 19041: MaximumWaitReason 0x28; 10 MHz QPC, so a tick is 100 ns).
 */
class SwitchExpanderTest {
    @TempDir Path dir;

    static final String S = "host1:NT Kernel Logger:132223104000000000";

    static ContextSwitch sw(int cpu, long ts, String src, int old, Integer oldPri, String state, String reason, String mode,
                            Integer nw, Integer newPri, Long ticks, Long since, Long run) {
        return new ContextSwitch(S, "host1", cpu, ts, ns(ts), src, old, oldPri, state, reason, mode, nw, newPri, ticks,
                null, since, run);
    }

    List<ContextSwitch> decodeScenario() throws Exception {
        try (TinyTrace t = new TinyTrace(dir.resolve("tiny.etl"), 19041)) {
            // cpu 0, batch 1: FirstTimeStamp 1000, TidTable {100, 104}, bases {8, 10}
            t.compact(0, 1000, new int[] {100, 104}, new int[] {8, 10}, ""
                    + "29000000"            // Idle: 1 | 10 << 2 = 0x29 → ts 1010
                    + "820c1400"            // Lite: 2 | idx 0 | inc 2 << 6 | wr 6 << 9 | 40 << 15 = 0x140C82 → ts 1050
                    + "67000000" + "91b20100"); // Full: 3 | 25 << 2; idx 1 | 0x29 << 4 | pri 12 << 10 | wait 3 << 15 → ts 1075
            // cpu 0, batch 2: FirstTimeStamp 1100, TidTable {100}, base {8}
            t.compact(0, 1100, new int[] {100}, new int[] {8}, ""
                    + "02580a00"            // Lite: 2 | wr 0x2C (Terminated) << 9 | 20 << 15 = 0xA5802 → ts 1120
                    + "1400");              // IdleShort: 5 << 2 → ts 1125
            // cpu 1, plain CSwitch events
            t.cswitch(1, 1060, 200, 0, 9, 0, 2, 0, 0);
            t.cswitch(1, 1200, 100, 200, 8, 9, 5, 4, 2);
            t.cswitch(1, 1300, 104, 100, 12, 8, 5, 15, 0);
            t.cswitch(1, 1350, 0, 104, 0, 12, 5, 15, 0);
            t.threadEnd(1, 1400, 40, 104);
            t.cswitch(1, 1500, 104, 0, 12, 0, 2, 0, 7);
            return t.decode();
        }
    }

    @Test
    void everyFieldOfATwoProcessorTrace() throws Exception {
        String C = ContextSwitch.COMPACT;
        String W = ContextSwitch.CSWITCH;
        List<ContextSwitch> expected = List.of(
                // idle packet: old fields null, no wait ticks, no derived times
                sw(0, 1010, C, 0, null, null, null, null, 100, null, null, null, null),
                // Lite: priority base 8 + 2; new thread 104 is the next packet's old thread
                sw(0, 1050, C, 100, 10, "Waiting", "UserRequest", null, 104, null, 1L, null, 4000L),
                // Full: 0x29 - 0x28 = 1 Ready; new thread 100 comes from the NEXT batch; 100 waited 1050→1075
                sw(0, 1075, C, 104, 12, "Ready", null, null, 100, null, 3L, 2500L, 2500L),
                sw(1, 1060, W, 0, null, null, null, null, 200, 9, 0L, null, null),
                // 100 terminates; the new thread is idle (next packet is an idle packet)
                sw(0, 1120, C, 100, 8, "Terminated", null, null, 0, null, null, null, 4500L),
                // last switch on cpu 0: new thread unknown
                sw(0, 1125, C, 0, null, null, null, null, null, null, null, null, null),
                // TID 100 reused after Terminated: no time since last
                sw(1, 1200, W, 200, 9, "Waiting", "DelayExecution", "UserMode", 100, 8, 2L, null, 14000L),
                // 104 left cpu 0 at 1075 and comes in on cpu 1 at 1300: a wait across processors
                sw(1, 1300, W, 100, 8, "Waiting", "WrQueue", "UserMode", 104, 12, 0L, 22500L, 10000L),
                sw(1, 1350, W, 104, 12, "Waiting", "WrQueue", "UserMode", 0, null, null, null, 5000L),
                // a Thread End event at 1400 resets 104
                sw(1, 1500, W, 0, null, null, null, null, 104, 12, 7L, null, null));
        List<ContextSwitch> got = decodeScenario();
        List<ContextSwitch> byTime = new ArrayList<>(expected);
        byTime.sort((a, b) -> a.timestamp() != b.timestamp() ? Long.compare(a.timestamp(), b.timestamp()) : Integer.compare(a.cpu(), b.cpu()));
        assertEquals(byTime.size(), got.size());
        for (int i = 0; i < got.size(); i++) assertEquals(byTime.get(i), got.get(i), "switch " + i);
    }

    @Test
    void checkRejectsABufferWithAMalformedPayloadBeforeItIsUsed() throws Exception {
        java.nio.file.Path f = dir.resolve("bad.etl");
        try (TinyTrace t = new TinyTrace(f, 19041)) {
            t.cswitch(0, 1005, 300, 0, 8, 0, 2, 0, 0);
            // a compact batch whose last packet is cut: a Full packet's first 4 bytes only
            t.compact(0, 1010, new int[] {300}, new int[] {8}, "29000000" + "03000000");
        }
        try (io.swapstream.schemas.etw.EtlReader r = io.swapstream.schemas.etw.EtlReader.open(f)) {
            r.next(); // header buffer
            SessionDecoder.check(r.decoder());
            r.next();
            io.swapstream.schemas.etw.EtlFormatException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.swapstream.schemas.etw.EtlFormatException.class, () -> SessionDecoder.check(r.decoder()));
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("event 0x0525"), e.getMessage());
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("byte offset " + (4096 + 0x48 + 0x28)), e.getMessage());
        }
    }

    @Test
    void countersReportTheUnknownLastNewThread() throws Exception {
        try (TinyTrace t = new TinyTrace(dir.resolve("c.etl"), 19041)) {
            t.compact(0, 1000, new int[] {100}, new int[] {8}, "29000000" + "29000000");
            t.cswitch(1, 1005, 300, 0, 8, 0, 2, 0, 0);
            t.cswitch(1, 1010, 0, 999, 0, 8, 5, 6, 0); // old 999 is not 300, the thread switched in
            t.close();
            List<ContextSwitch> out = new ArrayList<>();
            SessionDecoder d = SessionDecoder.decodeFile(t.file, "h", null, out::add, null);
            assertEquals(4, d.counters().switches);
            assertEquals(1, d.counters().lastSwitchWithoutNewThread);
            // cpu 0: idle then idle again although the first switch's new thread was idle (0): consistent;
            // cpu 1: 999 switched out while 300 was switched in: one inconsistency
            assertEquals(1, d.counters().oldThreadNotLastSwitchedIn);
            assertEquals(2, d.counters().idlePackets);
        }
    }
}
