package io.swapstream.decode;

import static io.swapstream.decode.TinyTrace.ns;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.event.ThreadEvent;
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

    static SwitchRow sw(int cpu, long ts, String src, int old, Integer oldPri, String state, String reason, String mode,
                            Integer nw, Integer newPri, Long ticks, Long since, Long run) {
        return sw(cpu, ts, src, old, oldPri, state, reason, mode, nw, newPri, ticks, since, run, null, null, null, null);
    }

    /** A switch with its ready fields. */
    static SwitchRow sw(int cpu, long ts, String src, int old, Integer oldPri, String state, String reason, String mode,
                            Integer nw, Integer newPri, Long ticks, Long since, Long run, Long ready, Long waits,
                            Integer readier, Integer readierPid) {
        // TinyTrace writes 0 in every CSwitch byte the record's last five fields come from
        boolean cswitch = SwitchRow.CSWITCH.equals(src);
        return new SwitchRow(S, "host1", cpu, ts, ns(ts), src, old, oldPri, state, reason, mode, nw, newPri, ticks,
                null, since, run, ready, waits, readier, readierPid, cswitch && old == 0 ? 0 : null, cswitch && old != 0 ? 0 : null,
                cswitch ? 0 : null, cswitch ? 0 : null, cswitch ? 0 : null);
    }

    List<SwitchRow> decodeScenario() throws Exception {
        try (TinyTrace t = new TinyTrace(dir.resolve("tiny.etl"), 19041)) {
            // cpu 0, batch 1: FirstTimeStamp 1000, TidTable {100, 104}, bases {8, 10}
            t.compact(0, 1100, 1000, new int[] {100, 104}, new int[] {8, 10}, ""
                    + "29000000"            // Idle: 1 | 10 << 2 = 0x29 → ts 1010
                    + "820c1400"            // Lite: 2 | idx 0 | inc 2 << 6 | wr 6 << 9 | 40 << 15 = 0x140C82 → ts 1050
                    + "67000000" + "91b20100"); // Full: 3 | 25 << 2; idx 1 | 0x29 << 4 | pri 12 << 10 | wait 3 << 15 → ts 1075
            // cpu 0, batch 2: FirstTimeStamp 1100, TidTable {100}, base {8}
            t.compact(0, 1130, 1100, new int[] {100}, new int[] {8}, ""
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
        String C = SwitchRow.COMPACT;
        String W = SwitchRow.CSWITCH;
        List<SwitchRow> expected = List.of(
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
                // 104 left cpu 0 at 1075 and comes in on cpu 1 at 1300: a wait across processors; it left
                // in state Ready (preempted), so all 225 ticks are Ready time, none Waits, and no thread readied it
                sw(1, 1300, W, 100, 8, "Waiting", "WrQueue", "UserMode", 104, 12, 0L, 22500L, 10000L, 22500L, 0L, null, null),
                sw(1, 1350, W, 104, 12, "Waiting", "WrQueue", "UserMode", 0, null, null, null, 5000L),
                // a Thread End event at 1400 resets 104
                sw(1, 1500, W, 0, null, null, null, null, 104, 12, 7L, null, null));
        List<SwitchRow> got = decodeScenario();
        List<SwitchRow> byTime = new ArrayList<>(expected);
        byTime.sort((a, b) -> a.timestamp() != b.timestamp() ? Long.compare(a.timestamp(), b.timestamp()) : Integer.compare(a.cpu(), b.cpu()));
        assertEquals(byTime.size(), got.size());
        for (int i = 0; i < got.size(); i++) assertEquals(byTime.get(i), got.get(i), "switch " + i);
    }

    /**
     * What the kernel writes (docs/etw-formats.md §5): a Thread End at t=50 sits in processor 0's buffer
     * before the batch holding that processor's packets from t=10 to t=90, because the batch was
     * logged when it was flushed (t=95). Processor 1's batch is logged at t=85, after processor 0's
     * buffer in the file. Times below are t = ts - 1000, ticks of 100 ns.
     *
     * <pre>
     * cpu 0 batch (flushed t=95), TidTable {300, 100, 104}, bases {9, 8, 10}:
     *   t=10 IdleShort delta 10                                   28 00
     *   t=20 Lite  idx0 inc0 wr 15 WrQueue        delta 10        2|15<<9|10<<15      = 0x051E02
     *   t=40 Full  delta 20; idx1 wr 0x29 (Ready) pri 12 wait 2   3|20<<2 = 0x53; 1|41<<4|12<<10|2<<15 = 0x13291
     *   t=70 Lite  idx2 inc1 wr 4 DelayExecution  delta 30        2|2<<2|1<<6|4<<9|30<<15 = 0x0F084A
     *   t=90 Lite  idx0 inc0 wr 15 WrQueue        delta 20        2|15<<9|20<<15      = 0x0A1E02
     * cpu 1 batch (flushed t=85), TidTable {104, 100}, bases {10, 8}:
     *   t=15 IdleShort delta 15                                   3c 00
     *   t=35 Lite  idx0 inc0 wr 15 WrQueue        delta 20        0x0A1E02
     *   t=60 IdleShort delta 25                                   64 00
     *   t=80 Lite  idx1 inc4 wr 6 UserRequest     delta 20        2|1<<2|4<<6|6<<9|20<<15 = 0x0A0D06
     * </pre>
     */
    @Test
    void aThreadEndLoggedWhileABatchWasOpenTakesItsPlaceInTime() throws Exception {
        List<Object> merged = new ArrayList<>();
        Path f = dir.resolve("open-batch.etl");
        try (TinyTrace t = new TinyTrace(f, 19041)) {
            t.threadEnd(0, 1050, 40, 300);
            t.compact(0, 1095, 1000, new int[] {300, 100, 104}, new int[] {9, 8, 10},
                    "2800" + "021e0500" + "53000000" + "91320100" + "4a080f00" + "021e0a00");
            t.compact(1, 1085, 1000, new int[] {104, 100}, new int[] {10, 8},
                    "3c00" + "021e0a00" + "6400" + "060d0a00");
        }
        SessionDecoder d = TinyTrace.decodeInMergeOrder(f, merged);
        String C = SwitchRow.COMPACT;
        List<Object> expected = List.of(
                sw(0, 1010, C, 0, null, null, null, null, 300, null, null, null, null),
                sw(1, 1015, C, 0, null, null, null, null, 104, null, null, null, null),
                // 300 ran 1010→1020 on cpu 0; its new thread 100 is the next packet's old thread
                sw(0, 1020, C, 300, 9, "Waiting", "WrQueue", null, 100, null, 1L, null, 1000L),
                // the next packet on cpu 1 is idle: new thread 0, no wait ticks
                sw(1, 1035, C, 104, 10, "Waiting", "WrQueue", null, 0, null, null, null, 2000L),
                // 104 left cpu 1 at 1035 and comes in here at 1040: 5 ticks
                sw(0, 1040, C, 100, 12, "Ready", null, null, 104, null, 2L, 500L, 2000L),
                // the Thread End at its own time, between the switches around it
                new ThreadLabel(S, 300, 40, null,
                        null, 8, null, ns(1050)),
                // 100 was preempted on cpu 0 at 1040 (state Ready): 20 ticks, all of them Ready time
                sw(1, 1060, C, 0, null, null, null, null, 100, null, null, 2000L, null, 2000L, 0L, null, null),
                // TID 300 again: the Thread End at 1050 ended the first 300, so no time since last
                sw(0, 1070, C, 104, 11, "Waiting", "DelayExecution", null, 300, null, 1L, null, 3000L),
                // the last switch of each processor: new thread unknown
                sw(1, 1080, C, 100, 12, "Waiting", "UserRequest", null, null, null, 1L, null, 2000L),
                sw(0, 1090, C, 300, 9, "Waiting", "WrQueue", null, null, null, 1L, null, 2000L));
        assertEquals(expected.size(), merged.size(), merged.toString());
        for (int i = 0; i < expected.size(); i++) assertEquals(expected.get(i), merged.get(i), "item " + i);
        assertEquals(0, d.counters().switchesOutOfOrder);
        assertEquals(0, d.counters().lateEvents);
        assertEquals(2, d.counters().lastSwitchWithoutNewThread);
    }

    /** DCEnd is rundown at session end: the thread still lives, so its wait goes on and it gets no end time. */
    @Test
    void aRundownDcEndDoesNotEndTheThread() throws Exception {
        List<Object> merged = new ArrayList<>();
        Path f = dir.resolve("dcend.etl");
        try (TinyTrace t = new TinyTrace(f, 19041)) {
            t.cswitch(0, 1010, 300, 0, 9, 0, 2, 0, 0);
            t.cswitch(0, 1020, 0, 300, 0, 9, 5, 15, 0);
            t.thread(0, ThreadEvent.DC_END, 1030, 40, 300);
            t.cswitch(0, 1040, 300, 0, 9, 0, 2, 0, 1);
        }
        TinyTrace.decodeInMergeOrder(f, merged);
        String W = SwitchRow.CSWITCH;
        assertEquals(List.of(
                sw(0, 1010, W, 0, null, null, null, null, 300, 9, 0L, null, null),
                sw(0, 1020, W, 300, 9, "Waiting", "WrQueue", "UserMode", 0, null, null, null, 1000L),
                new ThreadLabel(S, 300, 40, null, null, 8, null, null),
                sw(0, 1040, W, 0, null, null, null, null, 300, 9, 1L, 2000L, null)), merged);
    }

    @Test
    void checkRejectsABufferWithAMalformedPayloadBeforeItIsUsed() throws Exception {
        java.nio.file.Path f = dir.resolve("bad.etl");
        try (TinyTrace t = new TinyTrace(f, 19041)) {
            t.cswitch(0, 1005, 300, 0, 8, 0, 2, 0, 0);
            // a compact batch whose last packet is cut: a Full packet's first 4 bytes only
            t.compact(0, 1010, 1010, new int[] {300}, new int[] {8}, "29000000" + "03000000");
        }
        try (io.swapstream.etw.EtlReader r = io.swapstream.etw.EtlReader.open(f)) {
            r.next(); // header buffer
            SessionDecoder.check(r.decoder());
            r.next();
            io.swapstream.etw.EtlFormatException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.swapstream.etw.EtlFormatException.class, () -> SessionDecoder.check(r.decoder()));
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("event 0x0525"), e.getMessage());
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("byte offset " + (4096 + 0x48 + 0x28)), e.getMessage());
        }
    }

    @Test
    void countersReportTheUnknownLastNewThread() throws Exception {
        try (TinyTrace t = new TinyTrace(dir.resolve("c.etl"), 19041)) {
            t.compact(0, 1030, 1000, new int[] {100}, new int[] {8}, "29000000" + "29000000");
            t.cswitch(1, 1005, 300, 0, 8, 0, 2, 0, 0);
            t.cswitch(1, 1010, 0, 999, 0, 8, 5, 6, 0); // old 999 is not 300, the thread switched in
            t.close();
            List<SwitchRow> out = new ArrayList<>();
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
