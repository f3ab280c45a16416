package io.swapstream.etw;

import java.util.HashMap;
import java.util.Map;

/** KTHREAD_STATE and KWAIT_REASON names (docs/etw-formats.md §6). */
public final class KernelEnums {
    private KernelEnums() {}

    public static final int STATE_TERMINATED = 4;
    public static final int STATE_WAITING = 5;
    public static final int STATE_TRANSITION = 6;
    public static final int STATE_WAITING_FOR_PROCESS_IN_SWAP = 9;

    /**
     * A thread switched out in this state still wants a processor (preempted, quantum end), so it is
     * Ready from its switch-out: any known state but Waiting, Transition, WaitingForProcessInSwap,
     * Terminated (docs/architecture.md "Ready time").
     */
    public static boolean isRunnable(int state) {
        return state >= 0 && state < 10 && state != STATE_WAITING && state != STATE_TRANSITION
                && state != STATE_WAITING_FOR_PROCESS_IN_SWAP && state != STATE_TERMINATED;
    }

    /** KPROCESSOR_MODE: the wait mode of a thread switched out waiting. */
    public static final String[] WAIT_MODES = {"KernelMode", "UserMode"};

    private static final String[] THREAD_STATES = {
        "Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting", "Transition", "DeferredReady",
        "GateWaitObsolete", "WaitingForProcessInSwap"
    };

    private static final String[] WAIT_REASONS = {
        "Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution", "Suspended", "UserRequest",
        "WrExecutive", "WrFreePage", "WrPageIn", "WrPoolAllocation", "WrDelayExecution", "WrSuspended",
        "WrUserRequest", "WrEventPair", "WrQueue", "WrLpcReceive", "WrLpcReply", "WrVirtualMemory", "WrPageOut",
        "WrRendezvous", "WrKeyedEvent", "WrTerminated", "WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack",
        "WrKernel", "WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt", "WrPreempted",
        "WrYieldExecution", "WrFastMutex", "WrGuardedMutex", "WrRundown", "WrAlertByThreadId", "WrDeferredPreempt",
        "WrPhysicalFault", "WrIoRing", "WrMdlCache", "WrRcu"
    };

    private static final String[] STATE_CACHE = cache("State", THREAD_STATES, 64);
    private static final String[] REASON_CACHE = cache("WaitReason", WAIT_REASONS, 256);

    private static String[] cache(String prefix, String[] names, int n) {
        String[] out = new String[n];
        for (int i = 0; i < n; i++) out[i] = i < names.length ? names[i] : prefix + i;
        return out;
    }

    /** KTHREAD_STATE name; values past the table read "StateN". */
    public static String threadState(int state) {
        return state >= 0 && state < STATE_CACHE.length ? STATE_CACHE[state] : "State" + state;
    }

    /** KWAIT_REASON name; values past the table read "WaitReasonN". */
    public static String waitReason(int reason) {
        return reason >= 0 && reason < REASON_CACHE.length ? REASON_CACHE[reason] : "WaitReason" + reason;
    }

    private static final Map<String, Integer> REASON_VALUES = new HashMap<>();
    private static final Map<String, Integer> STATE_VALUES = new HashMap<>();

    static {
        for (int i = 0; i < REASON_CACHE.length; i++) REASON_VALUES.put(REASON_CACHE[i], i);
        for (int i = 0; i < STATE_CACHE.length; i++) STATE_VALUES.put(STATE_CACHE[i], i);
    }

    /** The KWAIT_REASON value of a name given by {@link #waitReason}, or -1. */
    public static int waitReasonValue(String name) {
        Integer v = name == null ? null : REASON_VALUES.get(name);
        return v == null ? -1 : v;
    }

    /** The KTHREAD_STATE value of a name given by {@link #threadState}, or -1. */
    public static int threadStateValue(String name) {
        Integer v = name == null ? null : STATE_VALUES.get(name);
        return v == null ? -1 : v;
    }
}
