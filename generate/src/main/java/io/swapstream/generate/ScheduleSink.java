package io.swapstream.generate;

/** What the simulated scheduler does, in time order; times are raw 10 MHz ticks. */
public interface ScheduleSink {
    /**
     * One context switch on {@code cpu}.
     *
     * @param oldWaitReason KWAIT_REASON written even when the state is not Waiting (as the kernel does)
     * @param pmc           cumulative counters of this cpu at the switch, or null
     * @param detail        what only a CSwitch event carries
     */
    void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBasePriority,
                  int oldState, int oldWaitReason, boolean oldUserMode, int newWaitTicks, long[] pmc, SwitchDetail detail);

    /**
     * A ReadyThread event: {@code tid} became Ready, logged on {@code cpu} at once (not batched).
     *
     * @param readier the thread running on {@code cpu} that readied it, 0 for a DPC or the idle thread
     * @param flags   1: readied from a DPC
     */
    default void onReady(int cpu, long ts, int tid, int readier, int adjustReason, int adjustIncrement, int flags) { }

    default void onProcess(int cpu, long ts, int hookId, int pid, int parentPid, String image, String commandLine) { }

    default void onThread(int cpu, long ts, int hookId, int pid, int tid, int basePriority) { }

    default void onThreadName(int cpu, long ts, int pid, int tid, String name) { }

    /** An event the decoder must skip. */
    default void onNoise(int cpu, long ts, int kind) { }

    /** The kernel's flush timer fired: write out partly filled buffers. */
    default void onFlushTimer(long ts) { }
}
