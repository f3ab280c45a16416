package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.batch.SwitchRow;
import io.swapstream.etw.KernelEnums;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.ScheduleSink;
import io.swapstream.generate.SchedulerSimulator;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the simulator decided, recorded straight from it, against what the decoder reads back from
 * the written file: old/new thread, priorities, state and reason of every switch.
 */
class GeneratedScheduleRoundTripTest {
    record Decided(int cpu, long ts, int newTid, int oldTid, int newPri, int oldPri, int state, int reason) {}

    @Test
    void decoderReadsBackWhatTheSimulatorDecided() throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(8_000).withSeed(3).withMode("cswitch");
        List<Decided> decided = new ArrayList<>();
        new SchedulerSimulator(o, new ScheduleSink() {
            public void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBase,
                                 int oldState, int oldWaitReason, boolean um, int ticks, long[] pmc,
                                 io.swapstream.generate.SwitchDetail detail) {
                decided.add(new Decided(cpu, ts, newTid, oldTid, newPriority, oldPriority, oldState, oldWaitReason));
            }
            public void onProcess(int c, long t, int h, int p, int pp, String i, String cl) {}
            public void onThread(int c, long t, int h, int p, int tid, int b) {}
            public void onThreadName(int c, long t, int p, int tid, String n) {}
            public void onNoise(int c, long t, int k) {}
            public void onFlushTimer(long t) {}
        }).run(io.swapstream.generate.TraceGenerator.TS0 + 1);
        java.nio.file.Path f = java.nio.file.Files.createTempFile("rt", ".etl");
        try {
            io.swapstream.generate.TraceGenerator.generate(f, o, 0x28);
            List<SwitchRow> got = new ArrayList<>();
            SessionDecoder.decodeFile(f, "h", null, got::add, null);
            decided.sort(Comparator.comparingLong(Decided::ts).thenComparingInt(Decided::cpu));
            assertEquals(decided.size(), got.size());
            for (int i = 0; i < got.size(); i++) {
                Decided d = decided.get(i);
                SwitchRow s = got.get(i);
                assertEquals(d.cpu(), s.cpu());
                assertEquals(d.ts(), s.timestamp());
                assertEquals(d.oldTid(), s.oldThreadId());
                assertEquals(d.newTid(), s.newThreadId());
                if (d.oldTid() != 0) {
                    assertEquals(d.oldPri(), s.oldThreadPriority());
                    assertEquals(KernelEnums.threadState(d.state()), s.oldThreadState());
                    assertEquals(d.state() == 5 ? KernelEnums.waitReason(d.reason()) : null, s.oldThreadWaitReason());
                }
                if (d.newTid() != 0) assertEquals(d.newPri(), s.newThreadPriority());
            }
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }
}
