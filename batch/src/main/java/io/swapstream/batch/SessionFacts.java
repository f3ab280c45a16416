package io.swapstream.batch;

import io.swapstream.etw.ClockType;
import io.swapstream.etw.LogFileMode;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import java.util.List;

/** One recording's facts (docs/architecture.md "Topics and records", etw.sessions): logfile header, modes, clock, loss. */
public record SessionFacts(String session, String host, String loggerName, String logFileName, int build,
                           int numberOfProcessors, int pointerSize, String clockType, long perfFreq,
                           String logFileMode, List<String> logFileModeNames, long startTimeNanos, long endTimeNanos,
                           long bootTimeNanos, long eventsLost, long buffersLost, int maximumWaitReason) {

    public static SessionFacts of(String host, LogfileHeader h, int maximumWaitReason) {
        return new SessionFacts(h.sessionId(host), host, h.loggerName(), h.logFileName(), h.build(),
                h.numberOfProcessors(), h.pointerSize(), ClockType.name(h.clockType()), h.perfFreq(),
                LogFileMode.hex(h.logFileMode()), LogFileMode.names(h.logFileMode()),
                SessionClock.fileTimeToUnixNanos(h.startTime()),
                h.endTime() == 0 ? 0 : SessionClock.fileTimeToUnixNanos(h.endTime()),
                h.bootTime() == 0 ? 0 : SessionClock.fileTimeToUnixNanos(h.bootTime()),
                Integer.toUnsignedLong(h.eventsLost()), Integer.toUnsignedLong(h.buffersLost()), maximumWaitReason);
    }
}
