package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlWriter;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.WakeEdge;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CSwitch trace laid out byte by byte, whose C-states, ready split and waker chain are worked out
 * by hand below: lsass.exe's thread wakes sql.exe's, a DPC wakes lsass.exe's, and the last event is
 * the real 64-bit WMI_CONTEXTSWAP payload of docs/etw-formats.md §4. A tick is 100 ns.
 */
class HandBuiltWakeTraceTest {
    @TempDir Path dir;

    static final long START_FT = 132223104000000000L; // 2020-01-01T00:00:00Z
    static final int SQL = 400, LSASS = 404;
    static final int WAITING = 5, READY = 1, WR_QUEUE = 15, WR_PREEMPTED = 32;

    @Test
    void cStatesReadySplitAndWakeEdgesAsWorkedOutByHand() throws Exception {
        Path f = dir.resolve("hand.etl");
        try (EtlWriter w = new EtlWriter(f, new EtlWriter.Session(4096, 19041, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                START_FT, START_FT - 1, 1, "NT Kernel Logger", "hand.etl"), 1000)) {
            process(w, 1000, SQL, "sql.exe");
            process(w, 1000, LSASS, "lsass.exe");
            thread(w, 1000, SQL, 100);
            thread(w, 1000, LSASS, 200);
            thread(w, 1000, SQL, 300);
            // cpu, ts, new, old, new priority, old priority, state, reason, then C-state or rank, decrement, ideal processor, quantum
            cswitch(w, 0, 1010, 100, 0, 9, 0, 2, 0, 2, 1, 0, 0);             // idle (C2) -> 100: its first switch-in
            cswitch(w, 1, 1010, 200, 0, 10, 0, 2, 0, 1, 0, 1, 0);            // idle (C1) -> 200
            cswitch(w, 0, 1020, 0, 100, 0, 9, WAITING, WR_QUEUE, 1, 0, 0, 5000); // 100 waits (rank 1, 5,000 x 1,024 cycles left)
            ready(w, 1, 1030, 100, 0);                                        // 200 (lsass) readies 100 on cpu 1
            cswitch(w, 1, 1040, 0, 200, 0, 10, WAITING, WR_QUEUE, 0, 0, 1, 7); // 200 waits
            cswitch(w, 0, 1050, 100, 0, 10, 0, 2, 0, 3, 1, 0, 0);            // idle (C3) -> 100: waited 1020..1030, ready 1030..1050
            ready(w, 0, 1060, 200, 1);                                        // a DPC readies 200 on cpu 0
            cswitch(w, 0, 1070, 200, 100, 11, 10, READY, WR_PREEMPTED, 0, 2, 0, 3); // 100 preempted by 200: ready 1060..1070, contended
            cswitch(w, 1, 1080, 100, 0, 10, 0, 2, 0, 1, 0, 1, 0);            // idle (C1) -> 100: ready 1070..1080, no wake
            cswitch(w, 1, 1095, 0, 100, 0, 10, WAITING, WR_QUEUE, 0, 0, 1, 9);
            // the real payload (etw-formats.md §4): 0 -> 2252, priority 8, PreviousCState 1, ideal processor 4, wait time 1
            byte[] real = HexFormat.of().parseHex("cc0800000000000008000100000002040100000000000000");
            w.perfInfoEvent(1, 0x0524, 4, 1100, null, null, real, 24);
        }
        List<SwitchRow> rows = new ArrayList<>();
        SessionDecoder.decodeFile(f, "h", null, rows::add, null);
        assertEquals(9, rows.size());
        SwitchRow first = rows.get(0); // idle -> 100 on cpu 0
        assertEquals(List.of(2, 1, 0, 0), List.of(first.previousCState(), first.newThreadPriorityDecrement(),
                first.oldThreadIdealProcessor(), first.oldThreadRemainingQuantum()));
        assertNull(first.oldThreadRank(), "the byte is PreviousCState when the old thread is idle");
        SwitchRow out100 = rows.get(2); // 100 waits on cpu 0
        assertEquals(List.of(1, 0, 0, 5000), List.of(out100.oldThreadRank(), out100.newThreadPriorityDecrement(),
                out100.oldThreadIdealProcessor(), out100.oldThreadRemainingQuantum()));
        assertNull(out100.previousCState(), "the byte is OldThreadRank when the old thread is not idle");
        SwitchRow last = rows.get(8);
        assertEquals(List.of(2252, 8, 1, 0, 4, 0, 1L), List.of(last.newThreadId(), last.newThreadPriority(), last.previousCState(),
                last.newThreadPriorityDecrement(), last.oldThreadIdealProcessor(), last.oldThreadRemainingQuantum(),
                last.newThreadWaitTicks()));

        SessionStatistics st = new SessionStatistics(0);
        SessionDecoder.decodeBatches(f, "h", null, st::accept, null);
        Map<Integer, ThreadStats> threads = st.wholeSession().stream().collect(Collectors.toMap(ThreadStats::getThreadId, t -> t));
        ThreadStats t100 = threads.get(100);
        // two switch-ins from idle with a ready time: 1050 (C3, ready 20 ticks) and 1080 (C1, ready 10 ticks)
        assertEquals(List.of(2L, 3000L, 2000L, 0L, 0L), List.of(t100.getReadyIdleWakeCount(), t100.getReadyIdleWakeSumNanos(),
                t100.getReadyIdleWakeMaxNanos(), t100.getReadyContendedCount(), t100.getReadyContendedSumNanos()));
        assertEquals(Map.of("C1", 1L, "C3", 1L), strings(t100.getReadyIdleWakeByCState()));
        assertEquals(Map.of("C1", 1000L, "C3", 2000L), strings(t100.getReadyIdleWakeSumNanosByCState()));
        ThreadStats t200 = threads.get(200);
        // 1070: switched in over 100, not idle: contended, ready 10 ticks
        assertEquals(List.of(0L, 1L, 1000L), List.of(t200.getReadyIdleWakeCount(), t200.getReadyContendedCount(),
                t200.getReadyContendedSumNanos()));
        assertEquals(Map.of(), strings(t200.getReadyIdleWakeByCState()));

        // who woke whom: lsass.exe ended sql.exe's wait of 10 ticks (ready 20 after); a DPC ended lsass.exe's of 20 (ready 10);
        // 100's switch-in at 1080 ends no wait (it was preempted), the first switch-ins none either
        List<String> edges = new ArrayList<>();
        for (WakeEdge e : st.wakeEdges()) {
            edges.add(e.getWakerProcess() + " -> " + e.getWokenProcess() + ": " + e.getWakeCount() + " " + e.getWaitSumNanos() + " "
                    + e.getReadyCount() + " " + e.getReadySumNanos());
        }
        assertEquals(List.of("(interrupt) -> lsass.exe: 1 2000 1 1000", "lsass.exe -> sql.exe: 1 1000 1 2000"), edges);
    }

    static Map<String, Long> strings(Map<? extends CharSequence, Long> m) {
        return m.entrySet().stream().collect(Collectors.toMap(e -> e.getKey().toString(), Map.Entry::getValue));
    }

    static void cswitch(EtlWriter w, int cpu, long ts, int newTid, int oldTid, int newPri, int oldPri, int state, int reason,
                        int cStateOrRank, int decrement, int ideal, int quantum) {
        ByteBuffer p = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, newTid).putInt(4, oldTid).put(8, (byte) newPri).put(9, (byte) oldPri).put(10, (byte) cStateOrRank)
                .put(11, (byte) decrement).put(12, (byte) reason).put(13, (byte) 1).put(14, (byte) state).put(15, (byte) ideal)
                .putInt(16, 0).putInt(20, quantum);
        w.perfInfoEvent(cpu, 0x0524, 4, ts, null, null, p.array(), 24);
    }

    /** ReadyThread (0x0532): AwakenedThreadId, AdjustReason, AdjustIncrement, Flags (1: from a DPC). */
    static void ready(EtlWriter w, int cpu, long ts, int tid, int flags) {
        ByteBuffer p = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, tid).put(4, (byte) 1).put(6, (byte) flags);
        w.perfInfoEvent(cpu, 0x0532, 2, ts, null, null, p.array(), 8);
    }

    /** Process_V4 rundown (0x0303): key, pid, parent, session, exit, DirectoryTableBase, Flags, SID (none), image, command line. */
    static void process(EtlWriter w, long ts, int pid, String image) {
        byte[] img = (image + "\0").getBytes(StandardCharsets.ISO_8859_1);
        byte[] cmd = "\0".getBytes(StandardCharsets.UTF_16LE);
        ByteBuffer p = ByteBuffer.allocate(8 + 16 + 8 + 4 + 4 + img.length + cmd.length).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(0xFFFF000000000000L | pid).putInt(pid).putInt(4).putInt(1).putInt(0).putLong(0x1AB000L).putInt(0).putInt(0);
        p.put(img).put(cmd);
        w.systemEvent(0, 0x0303, 4, 0, pid, ts, p.array());
    }

    /** Thread_V3 rundown (0x0503): pid, tid, seven pointers, then base priority 8 at 68. */
    static void thread(EtlWriter w, long ts, int pid, int tid) {
        ByteBuffer p = ByteBuffer.allocate(72).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, pid).putInt(4, tid).put(68, (byte) 8);
        w.systemEvent(0, 0x0503, 3, tid, pid, ts, p.array());
    }
}
