package io.swapstream.aggregate;

import java.util.List;
import java.util.Map;

/**
 * Wait-time and priority statistics of one thread (session + TID) over a window or the whole
 * session: DESIGN.md "ThreadStats". Whole-session records span the thread's first and last switch.
 */
public record ThreadStats(
        String session,
        String host,
        int threadId,
        Integer processId,
        String processName,
        String threadName,
        long windowStartNanos,
        long windowEndNanos,
        long switchInCount,
        long switchOutCount,
        long voluntarySwitchOutCount,
        long involuntarySwitchOutCount,
        Map<String, Long> waitReasonCounts,
        long waitReasonBitMap,
        long waitCount,
        long waitSumNanos,
        Long waitMinNanos,
        Long waitMaxNanos,
        Double waitMeanNanos,
        Long waitP50Nanos,
        Long waitP90Nanos,
        Long waitP99Nanos,
        long newThreadWaitTicksCount,
        long newThreadWaitTicksSum,
        Long newThreadWaitTicksMax,
        long runCount,
        long runSumNanos,
        Long runMaxNanos,
        Integer priorityMin,
        Integer priorityMax,
        Double priorityMean,
        List<Long> priorityHistogram,
        List<Long> pmcDeltas) {

    /** Numeric fields a {@code --by} option may sort on. */
    public static final List<String> SORTABLE = List.of("switchInCount", "switchOutCount", "voluntarySwitchOutCount",
            "involuntarySwitchOutCount", "waitCount", "waitSumNanos", "waitMaxNanos", "waitMeanNanos", "waitP50Nanos",
            "waitP90Nanos", "waitP99Nanos", "runCount", "runSumNanos", "runMaxNanos", "priorityMax", "priorityMean");

    /** The value of a {@link #SORTABLE} field, nulls as negative infinity. */
    public double sortValue(String field) {
        Number n = switch (field) {
            case "switchInCount" -> switchInCount;
            case "switchOutCount" -> switchOutCount;
            case "voluntarySwitchOutCount" -> voluntarySwitchOutCount;
            case "involuntarySwitchOutCount" -> involuntarySwitchOutCount;
            case "waitCount" -> waitCount;
            case "waitSumNanos" -> waitSumNanos;
            case "waitMaxNanos" -> waitMaxNanos;
            case "waitMeanNanos" -> waitMeanNanos;
            case "waitP50Nanos" -> waitP50Nanos;
            case "waitP90Nanos" -> waitP90Nanos;
            case "waitP99Nanos" -> waitP99Nanos;
            case "runCount" -> runCount;
            case "runSumNanos" -> runSumNanos;
            case "runMaxNanos" -> runMaxNanos;
            case "priorityMax" -> priorityMax;
            case "priorityMean" -> priorityMean;
            default -> throw new IllegalArgumentException("cannot sort by '" + field + "'; one of " + SORTABLE);
        };
        return n == null ? Double.NEGATIVE_INFINITY : n.doubleValue();
    }
}
