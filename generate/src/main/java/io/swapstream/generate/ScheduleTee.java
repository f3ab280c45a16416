package io.swapstream.generate;

/** Passes every decision of the simulated scheduler to two sinks, the first one first. */
record ScheduleTee(ScheduleSink first, ScheduleSink second) implements ScheduleSink {
    @Override
    public void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBasePriority,
                         int oldState, int oldWaitReason, boolean oldUserMode, int newWaitTicks, long[] pmc, SwitchDetail detail) {
        first.onSwitch(cpu, ts, newTid, oldTid, newPriority, oldPriority, oldBasePriority, oldState, oldWaitReason,
                oldUserMode, newWaitTicks, pmc, detail);
        second.onSwitch(cpu, ts, newTid, oldTid, newPriority, oldPriority, oldBasePriority, oldState, oldWaitReason,
                oldUserMode, newWaitTicks, pmc, detail);
    }

    @Override
    public void onProcess(int cpu, long ts, int hookId, int pid, int parentPid, String image, String commandLine) {
        first.onProcess(cpu, ts, hookId, pid, parentPid, image, commandLine);
        second.onProcess(cpu, ts, hookId, pid, parentPid, image, commandLine);
    }

    @Override
    public void onReady(int cpu, long ts, int tid, int readier, int adjustReason, int adjustIncrement, int flags) {
        first.onReady(cpu, ts, tid, readier, adjustReason, adjustIncrement, flags);
        second.onReady(cpu, ts, tid, readier, adjustReason, adjustIncrement, flags);
    }

    @Override
    public void onThread(int cpu, long ts, int hookId, int pid, int tid, int basePriority) {
        first.onThread(cpu, ts, hookId, pid, tid, basePriority);
        second.onThread(cpu, ts, hookId, pid, tid, basePriority);
    }

    @Override
    public void onThreadName(int cpu, long ts, int pid, int tid, String name) {
        first.onThreadName(cpu, ts, pid, tid, name);
        second.onThreadName(cpu, ts, pid, tid, name);
    }

    @Override
    public void onNoise(int cpu, long ts, int kind) {
        first.onNoise(cpu, ts, kind);
        second.onNoise(cpu, ts, kind);
    }

    @Override
    public void onFlushTimer(long ts) {
        first.onFlushTimer(ts);
        second.onFlushTimer(ts);
    }
}
