package io.swapstream.decode.event;

/** Receives the switches of a compact batch, one call per packet, in packet order. */
@FunctionalInterface
public interface CompactSwitchSink {
    /**
     * @param kind              packet kind, {@link CompactBatchDecoder#IDLE_SHORT} .. {@link CompactBatchDecoder#FULL}
     * @param timestamp         raw session clock of this switch
     * @param oldThreadId       0 for idle packets
     * @param oldPriority       -1 for idle packets
     * @param oldState          KTHREAD_STATE, -1 for idle packets
     * @param oldWaitReason     KWAIT_REASON when the state is Waiting, else -1
     * @param newThreadWaitTime ticks: exact for Full, 1 (an upper bound) for Lite, -1 for idle
     * @param tableIndex        TidTable index of the old thread, -1 for idle packets
     */
    void onSwitch(int kind, long timestamp, int oldThreadId, int oldPriority, int oldState, int oldWaitReason,
                  int newThreadWaitTime, int tableIndex);
}
