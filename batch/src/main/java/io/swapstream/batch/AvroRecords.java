package io.swapstream.batch;


/** The decode stage's plain records as their Avro counterparts (same field names). */
public final class AvroRecords {
    private AvroRecords() {}

    public static io.swapstream.schemas.avro.ContextSwitch of(SwitchRow s) {
        return new io.swapstream.schemas.avro.ContextSwitch(s.session(), s.host(), s.cpu(), s.timestamp(), s.timeNanos(),
                s.source(), s.oldThreadId(), s.oldThreadPriority(), s.oldThreadState(), s.oldThreadWaitReason(),
                s.oldThreadWaitMode(), s.newThreadId(), s.newThreadPriority(), s.newThreadWaitTicks(), s.pmcCounters(),
                s.newThreadTimeSinceLastNanos(), s.oldThreadRunNanos(), s.newThreadReadyNanos(), s.newThreadWaitsNanos(),
                s.readyingThreadId(), s.readyingProcessId(), s.previousCState(), s.oldThreadRank(),
                s.newThreadPriorityDecrement(), s.oldThreadIdealProcessor(), s.oldThreadRemainingQuantum());
    }

    public static SwitchRow of(io.swapstream.schemas.avro.ContextSwitch s) {
        return new SwitchRow(s.getSession(), s.getHost(), s.getCpu(), s.getTimestamp(), s.getTimeNanos(),
                s.getSource(), s.getOldThreadId(), s.getOldThreadPriority(), s.getOldThreadState(),
                s.getOldThreadWaitReason(), s.getOldThreadWaitMode(), s.getNewThreadId(), s.getNewThreadPriority(),
                s.getNewThreadWaitTicks(), s.getPmcCounters(), s.getNewThreadTimeSinceLastNanos(), s.getOldThreadRunNanos(),
                s.getNewThreadReadyNanos(), s.getNewThreadWaitsNanos(), s.getReadyingThreadId(), s.getReadyingProcessId(),
                s.getPreviousCState(), s.getOldThreadRank(), s.getNewThreadPriorityDecrement(), s.getOldThreadIdealProcessor(),
                s.getOldThreadRemainingQuantum());
    }

    public static io.swapstream.schemas.avro.ThreadInfo of(ThreadLabel t) {
        return new io.swapstream.schemas.avro.ThreadInfo(t.session(), t.threadId(), t.processId(), t.processName(),
                t.threadName(), t.basePriority(), t.startNanos(), t.endNanos());
    }

    public static ThreadLabel of(io.swapstream.schemas.avro.ThreadInfo t) {
        return new ThreadLabel(t.getSession(), t.getThreadId(), t.getProcessId(), t.getProcessName(), t.getThreadName(),
                t.getBasePriority(), t.getStartNanos(), t.getEndNanos());
    }

    public static io.swapstream.schemas.avro.TraceSession.Builder of(SessionFacts s) {
        return io.swapstream.schemas.avro.TraceSession.newBuilder().setSession(s.session()).setHost(s.host())
                .setLoggerName(s.loggerName()).setLogFileName(s.logFileName()).setBuild(s.build())
                .setNumberOfProcessors(s.numberOfProcessors()).setPointerSize(s.pointerSize())
                .setClockType(s.clockType()).setPerfFreq(s.perfFreq()).setLogFileMode(s.logFileMode())
                .setLogFileModeNames(s.logFileModeNames()).setStartTimeNanos(s.startTimeNanos())
                .setEndTimeNanos(s.endTimeNanos()).setBootTimeNanos(s.bootTimeNanos()).setEventsLost(s.eventsLost())
                .setBuffersLost(s.buffersLost()).setMaximumWaitReason(s.maximumWaitReason());
    }

    /** Key of a thread's records: {@code session/tid}. */
    public static String threadKey(String session, int tid) {
        return session + "/" + tid;
    }
}
