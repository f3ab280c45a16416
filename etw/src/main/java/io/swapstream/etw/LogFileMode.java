package io.swapstream.etw;

import java.util.ArrayList;
import java.util.List;

/** LogFileMode bit names (docs/etw-formats.md §3). */
public final class LogFileMode {
    private LogFileMode() {}

    public static final int FILE_MODE_CIRCULAR = 0x00000002;
    public static final int REAL_TIME_MODE = 0x00000100;
    public static final int BUFFERING_MODE = 0x00000400;
    public static final int COMPRESSED_MODE = 0x04000000;
    /** A session of its own name that receives SystemTraceProvider (kernel) events, Windows 8 and later. */
    public static final int SYSTEM_LOGGER_MODE = 0x02000000;

    private static final String[] NAMES = {
        "EVENT_TRACE_FILE_MODE_SEQUENTIAL", "EVENT_TRACE_FILE_MODE_CIRCULAR", "EVENT_TRACE_FILE_MODE_APPEND",
        "EVENT_TRACE_FILE_MODE_NEWFILE", "EVENT_TRACE_USE_MS_FLUSH_TIMER", "EVENT_TRACE_FILE_MODE_PREALLOCATE",
        "EVENT_TRACE_NONSTOPPABLE_MODE", "EVENT_TRACE_SECURE_MODE", "EVENT_TRACE_REAL_TIME_MODE",
        "EVENT_TRACE_DELAY_OPEN_FILE_MODE", "EVENT_TRACE_BUFFERING_MODE", "EVENT_TRACE_PRIVATE_LOGGER_MODE",
        "EVENT_TRACE_ADD_HEADER_MODE", "EVENT_TRACE_USE_KBYTES_FOR_SIZE", "EVENT_TRACE_USE_GLOBAL_SEQUENCE",
        "EVENT_TRACE_USE_LOCAL_SEQUENCE", "EVENT_TRACE_RELOG_MODE", "EVENT_TRACE_PRIVATE_IN_PROC",
        "EVENT_TRACE_BUFFER_INTERFACE_MODE", "EVENT_TRACE_KD_FILTER_MODE", "EVENT_TRACE_REAL_TIME_RELOG_MODE",
        "EVENT_TRACE_LOST_EVENTS_DEBUG_MODE", "EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN",
        "EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN", "EVENT_TRACE_USE_PAGED_MEMORY", "EVENT_TRACE_SYSTEM_LOGGER_MODE",
        "EVENT_TRACE_COMPRESSED_MODE", "EVENT_TRACE_INDEPENDENT_SESSION_MODE",
        "EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING", "EVENT_TRACE_BLOCKING_MODE", "0x40000000",
        "EVENT_TRACE_ADDTO_TRIAGE_DUMP"
    };

    public static List<String> names(int mode) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 32; i++) if ((mode & (1 << i)) != 0) out.add(NAMES[i]);
        return out;
    }

    public static String hex(int mode) {
        return String.format("0x%08X", mode);
    }
}
