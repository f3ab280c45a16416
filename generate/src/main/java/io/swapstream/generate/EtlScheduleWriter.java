package io.swapstream.generate;

import io.swapstream.etw.EtlWriter;
import io.swapstream.etw.LoggerTiming;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Writes a simulated schedule as real ETL events: CSwitch events or compact batches. Everything
 * but a batch is written at its own time on its processor; batches when they are flushed.
 */
final class EtlScheduleWriter implements ScheduleSink {
    private final EtlWriter w;
    private final boolean compact;
    private final CompactBatchEncoder[] encoders;
    private final byte[] cswitch = new byte[24];
    private final ByteBuffer cs = ByteBuffer.wrap(cswitch).order(ByteOrder.LITTLE_ENDIAN);
    private final byte[] readyPayload = new byte[8];
    private final ByteBuffer ready = ByteBuffer.wrap(readyPayload).order(ByteOrder.LITTLE_ENDIAN);

    EtlScheduleWriter(EtlWriter w, boolean compact, int processors, int maximumWaitReason) {
        this.w = w;
        this.compact = compact;
        this.encoders = new CompactBatchEncoder[processors];
        // the generator's clock is 10 MHz: 100 ns a tick
        long maxAge = LoggerTiming.maxBatchAgeNanos(LoggerTiming.DEFAULT_TIMER_RESOLUTION) / 100;
        for (int c = 0; c < processors; c++) {
            encoders[c] = new CompactBatchEncoder(c, maximumWaitReason, maxAge,
                    (cpu, ts, payload, len) -> w.perfInfoEvent(cpu, 0x0525, 2, ts, null, null, payload, len));
        }
    }

    @Override
    public void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBase,
                         int oldState, int oldWaitReason, boolean oldUserMode, int newWaitTicks, long[] pmc, SwitchDetail detail) {
        if (compact) {
            encoders[cpu].onSwitch(ts, oldTid, oldPriority, oldBase, oldState, oldWaitReason, newWaitTicks);
            return;
        }
        cs.putInt(0, newTid).putInt(4, oldTid).put(8, (byte) newPriority).put(9, (byte) oldPriority);
        cs.put(10, (byte) detail.previousCStateOrRank()).put(11, (byte) detail.newThreadPriorityDecrement()).put(12, (byte) oldWaitReason);
        cs.put(13, (byte) (oldUserMode ? 1 : 0)).put(14, (byte) oldState).put(15, (byte) detail.oldThreadIdealProcessor());
        cs.putInt(16, newWaitTicks).putInt(20, detail.oldThreadRemainingQuantum());
        w.perfInfoEvent(cpu, 0x0524, 4, ts, pmc, null, cswitch, 24);
    }

    @Override
    public void onReady(int cpu, long ts, int tid, int readier, int adjustReason, int adjustIncrement, int flags) {
        // ReadyThread (docs/etw-formats.md §7): AwakenedThreadId, AdjustReason, AdjustIncrement, Flags, reserved
        ready.putInt(0, tid).put(4, (byte) adjustReason).put(5, (byte) adjustIncrement).put(6, (byte) flags).put(7, (byte) 0);
        w.perfInfoEvent(cpu, 0x0532, 2, ts, null, null, readyPayload, 8);
    }

    @Override
    public void onProcess(int cpu, long ts, int hookId, int pid, int parentPid, String image, String commandLine) {
        byte[] img = (image + "\0").getBytes(StandardCharsets.ISO_8859_1);
        byte[] cmd = (commandLine + "\0").getBytes(StandardCharsets.UTF_16LE);
        // Process_V4: key, pid, parent, session, exit, DirectoryTableBase, Flags, SID (none: 4 zero bytes), image, cmd
        ByteBuffer p = ByteBuffer.allocate(8 + 16 + 8 + 4 + 4 + img.length + cmd.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(0xFFFF000000000000L | pid).putInt(pid).putInt(parentPid).putInt(1).putInt(0).putLong(0x1AB000L).putInt(0).putInt(0);
        p.put(img).put(cmd);
        w.systemEvent(cpu, hookId, 4, 0, pid, ts, p.array());
    }

    @Override
    public void onThread(int cpu, long ts, int hookId, int pid, int tid, int basePriority) {
        // Thread_V3: pid, tid, 7 pointers, SubProcessTag, BasePriority, PagePriority, IoPriority, Flags
        ByteBuffer p = ByteBuffer.allocate(72).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, pid).putInt(4, tid).putLong(8, 0xFFFF800000000000L + tid * 0x1000L);
        p.put(68, (byte) basePriority).put(69, (byte) 5).put(70, (byte) 2);
        w.systemEvent(cpu, hookId, 3, tid, pid, ts, p.array());
    }

    @Override
    public void onThreadName(int cpu, long ts, int pid, int tid, String name) {
        byte[] n = (name + "\0").getBytes(StandardCharsets.UTF_16LE);
        ByteBuffer p = ByteBuffer.allocate(8 + n.length).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(pid).putInt(tid).put(n);
        w.systemEvent(cpu, 0x0548, 2, tid, pid, ts, p.array());
    }

    @Override
    public void onNoise(int cpu, long ts, int kind) {
        if (kind == 0) {
            // SampledProfile (0x0F2E): InstructionPointer, ThreadId, Count
            byte[] p = new byte[16];
            ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN).putLong(0x7FF612340000L).putInt(1000).putInt(1);
            w.perfInfoEvent(cpu, 0x0F2E, 2, ts, null, null, p, 16);
        } else {
            w.eventHeaderEvent(cpu, ts, 1000, 400, 7, new byte[12]);
        }
    }

    @Override
    public void onFlushTimer(long ts) {
        if (compact) for (CompactBatchEncoder e : encoders) e.flushIfOlder(ts);
        w.flushAll();
    }

    /** The session stops at {@code ts}: every open batch is logged. */
    void finish(long ts) {
        if (compact) for (CompactBatchEncoder e : encoders) e.flush(ts);
    }
}
