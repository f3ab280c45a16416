package io.swapstream.etw;

/** The session clock, from the logfile header's ReservedFlags (docs/etw-formats.md §3). */
public final class ClockType {
    private ClockType() {}

    public static final int RAW = 0;
    public static final int PERFCOUNTER = 1;
    public static final int SYSTEMTIME = 2;
    public static final int CPUCYCLE = 3;

    private static final String[] NAMES = {
        "EVENT_TRACE_CLOCK_RAW", "EVENT_TRACE_CLOCK_PERFCOUNTER", "EVENT_TRACE_CLOCK_SYSTEMTIME", "EVENT_TRACE_CLOCK_CPUCYCLE"
    };

    public static String name(int clockType) {
        return clockType >= 0 && clockType < NAMES.length ? NAMES[clockType] : "CLOCK_" + clockType;
    }
}
