package io.swapstream.batch;

import java.util.List;

/**
 * One context switch on one processor, the record of docs/architecture.md "Expansion". Null fields are
 * what the source encoding does not carry or what cannot be known (docs/architecture.md "Expansion").
 */
public record SwitchRow(
        String session,
        String host,
        int cpu,
        long timestamp,
        long timeNanos,
        String source,
        int oldThreadId,
        Integer oldThreadPriority,
        String oldThreadState,
        String oldThreadWaitReason,
        String oldThreadWaitMode,
        Integer newThreadId,
        Integer newThreadPriority,
        Long newThreadWaitTicks,
        List<Long> pmcCounters,
        Long newThreadTimeSinceLastNanos,
        Long oldThreadRunNanos,
        Long newThreadReadyNanos,
        Long newThreadWaitsNanos,
        Integer readyingThreadId,
        Integer readyingProcessId,
        Integer previousCState,
        Integer oldThreadRank,
        Integer newThreadPriorityDecrement,
        Integer oldThreadIdealProcessor,
        Integer oldThreadRemainingQuantum) {

    public static final String CSWITCH = "CSWITCH";
    public static final String COMPACT = "COMPACT";

    /** Field names in the SwitchRow schema's order: the CSV header and the JSON key order. */
    public static final List<String> FIELDS = List.of("session", "host", "cpu", "timestamp", "timeNanos", "source",
            "oldThreadId", "oldThreadPriority", "oldThreadState", "oldThreadWaitReason", "oldThreadWaitMode",
            "newThreadId", "newThreadPriority", "newThreadWaitTicks", "pmcCounters", "newThreadTimeSinceLastNanos",
            "oldThreadRunNanos", "newThreadReadyNanos", "newThreadWaitsNanos", "readyingThreadId", "readyingProcessId",
            "previousCState", "oldThreadRank", "newThreadPriorityDecrement", "oldThreadIdealProcessor", "oldThreadRemainingQuantum");
}
