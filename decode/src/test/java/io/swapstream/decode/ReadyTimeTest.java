package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ready time (docs/architecture.md "Ready time") on a two-processor trace written by hand, every field worked
 * out on paper. Times below are t = ts - 1000, ticks of 100 ns. Threads (DCStart rundown on cpu 1
 * at t=1..4): A=300 and C=104 in process 40, B=200 in process 44, D=500 in process 48.
 *
 * <pre>
 * cpu 0: one compact batch, logged when flushed at t=95, TidTable {300, 104}, bases {9, 10}:
 *   t=10 IdleShort delta 10                                   28 00          idle → A
 *   t=20 Lite  idx0 inc0 wr 15 WrQueue      delta 10          0x051E02       A waits → idle
 *   t=50 IdleShort delta 30                                   78 00          idle → A
 *   t=70 Full  delta 20; idx0 wr 0x29 (Ready) pri 12 wait 2   0x53; 0x13290  A preempted → C
 *   t=80 Lite  idx1 inc0 wr 4 DelayExecution delta 10         0x050806       C waits → unknown
 * cpu 1: CSwitch and ReadyThread events, written as they happen (before cpu 0's batch):
 *   t=5  idle → D;  t=8 D waits (Executive) → B
 *   t=40 ReadyThread A, flags 0: readied by B, the thread on cpu 1 then; cpu 0's batch holding
 *        A's switch-out at t=20 is still open
 *   t=60 B waits (UserRequest) → D, and at the same t=60 ReadyThread D, flags 1 (from a DPC),
 *        written after the switch: at equal times the event comes first
 *   t=90 D waits (WrQueue) → A, preempted on cpu 0 at t=70 with no ReadyThread event
 * </pre>
 */
class ReadyTimeTest {
    @TempDir Path dir;

    static final String C = SwitchRow.COMPACT;
    static final String W = SwitchRow.CSWITCH;

    @Test
    void everyFieldOfReadyTime() throws Exception {
        List<SwitchRow> got;
        try (TinyTrace t = new TinyTrace(dir.resolve("ready.etl"), 19041)) {
            t.thread(1, ThreadEvent.DC_START, 1001, 40, 300);
            t.thread(1, ThreadEvent.DC_START, 1002, 44, 200);
            t.thread(1, ThreadEvent.DC_START, 1003, 40, 104);
            t.thread(1, ThreadEvent.DC_START, 1004, 48, 500);
            t.cswitch(1, 1005, 500, 0, 8, 0, 2, 0, 0);
            t.cswitch(1, 1008, 200, 500, 9, 8, 5, 0, 0);
            t.readyThread(1, 1040, 300, 1, 1, 0);
            t.cswitch(1, 1060, 500, 200, 10, 9, 5, 6, 3);
            t.readyThread(1, 1060, 500, 2, 2, 1);
            t.cswitch(1, 1090, 300, 500, 9, 10, 5, 15, 0);
            t.compact(0, 1095, 1000, new int[] {300, 104}, new int[] {9, 10},
                    "2800" + "021e0500" + "7800" + "53000000" + "90320100" + "06080500");
            got = t.decode();
        }
        List<SwitchRow> expected = List.of(
                SwitchExpanderTest.sw(1, 1005, W, 0, null, null, null, null, 500, 8, 0L, null, null),
                // D ran 1005→1008; B has no ready time (never seen before)
                SwitchExpanderTest.sw(1, 1008, W, 500, 8, "Waiting", "Executive", "UserMode", 200, 9, 0L, null, 300L),
                SwitchExpanderTest.sw(0, 1010, C, 0, null, null, null, null, 300, null, null, null, null),
                // the next packet is idle: A's new thread is 0
                SwitchExpanderTest.sw(0, 1020, C, 300, 9, "Waiting", "WrQueue", null, 0, null, null, null, 1000L),
                // A: out at 20, readied at 40 by B (process 44), in at 50: 30 ticks = 20 Waits + 10 Ready
                SwitchExpanderTest.sw(0, 1050, C, 0, null, null, null, null, 300, null, null, 3000L, null,
                        1000L, 2000L, 200, 44),
                // D: out at 8, readied at 60 from a DPC, in at 60: 52 ticks of Waits, 0 Ready, no readying thread
                SwitchExpanderTest.sw(1, 1060, W, 200, 9, "Waiting", "UserRequest", "UserMode", 500, 10, 3L, 5200L, 5200L,
                        0L, 5200L, null, null),
                // A preempted (Ready) at 70; C has no earlier switch-out, so no ready time
                SwitchExpanderTest.sw(0, 1070, C, 300, 12, "Ready", null, null, 104, null, 2L, null, 2000L),
                // the batch's last packet: new thread unknown
                SwitchExpanderTest.sw(0, 1080, C, 104, 10, "Waiting", "DelayExecution", null, null, null, 1L, null, 1000L),
                // A: Ready from its switch-out at 70 to 90: 20 ticks Ready, 0 Waits, readied by no thread
                SwitchExpanderTest.sw(1, 1090, W, 500, 10, "Waiting", "WrQueue", "UserMode", 300, 9, 0L, 2000L, 3000L,
                        2000L, 0L, null, null));
        assertEquals(expected.size(), got.size(), got.toString());
        for (int i = 0; i < expected.size(); i++) assertEquals(expected.get(i), got.get(i), "switch " + i);
    }
}
