package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.ThreadStats;

/** ThreadStats as its Avro record (same field names). */
public final class ThreadStatsRecords {
    private ThreadStatsRecords() {}

    public static io.swapstream.schemas.avro.ThreadStats of(ThreadStats t) {
        return new io.swapstream.schemas.avro.ThreadStats(t.session(), t.host(), t.threadId(), t.processId(),
                t.processName(), t.threadName(), t.windowStartNanos(), t.windowEndNanos(), t.switchInCount(),
                t.switchOutCount(), t.voluntarySwitchOutCount(), t.involuntarySwitchOutCount(), t.waitReasonCounts(),
                t.waitReasonBitMap(), t.waitCount(), t.waitSumNanos(), t.waitMinNanos(), t.waitMaxNanos(),
                t.waitMeanNanos(), t.waitP50Nanos(), t.waitP90Nanos(), t.waitP99Nanos(), t.newThreadWaitTicksCount(),
                t.newThreadWaitTicksSum(), t.newThreadWaitTicksMax(), t.runCount(), t.runSumNanos(), t.runMaxNanos(),
                t.priorityMin(), t.priorityMax(), t.priorityMean(), t.priorityHistogram(), t.pmcDeltas());
    }

    public static ThreadStats of(io.swapstream.schemas.avro.ThreadStats t) {
        return new ThreadStats(t.getSession(), t.getHost(), t.getThreadId(), t.getProcessId(), t.getProcessName(),
                t.getThreadName(), t.getWindowStartNanos(), t.getWindowEndNanos(), t.getSwitchInCount(),
                t.getSwitchOutCount(), t.getVoluntarySwitchOutCount(), t.getInvoluntarySwitchOutCount(),
                new java.util.LinkedHashMap<>(t.getWaitReasonCounts()), t.getWaitReasonBitMap(), t.getWaitCount(),
                t.getWaitSumNanos(), t.getWaitMinNanos(), t.getWaitMaxNanos(), t.getWaitMeanNanos(), t.getWaitP50Nanos(),
                t.getWaitP90Nanos(), t.getWaitP99Nanos(), t.getNewThreadWaitTicksCount(), t.getNewThreadWaitTicksSum(),
                t.getNewThreadWaitTicksMax(), t.getRunCount(), t.getRunSumNanos(), t.getRunMaxNanos(), t.getPriorityMin(),
                t.getPriorityMax(), t.getPriorityMean(), t.getPriorityHistogram(), t.getPmcDeltas());
    }

    /** {@code session/tid} for whole-session records, {@code session/tid/windowStart} for windows. */
    public static String key(String session, int tid, Long windowStart) {
        return windowStart == null ? session + "/" + tid : session + "/" + tid + "/" + windowStart;
    }
}
