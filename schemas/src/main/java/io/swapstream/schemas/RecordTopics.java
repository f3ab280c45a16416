package io.swapstream.schemas;

import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.avro.WakeEdge;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;

/** The topics whose values are Avro records, by name without the prefix, and each one's record. */
public final class RecordTopics {
    private RecordTopics() {}

    public static final Map<String, Class<? extends SpecificRecord>> VALUE_TYPES;

    static {
        Map<String, Class<? extends SpecificRecord>> m = new LinkedHashMap<>();
        m.put(SwapstreamConfig.SESSIONS, TraceSession.class);
        m.put(SwapstreamConfig.SWITCH_BATCHES, ContextSwitchBatch.class);
        m.put(SwapstreamConfig.CONTEXT_SWITCHES, ContextSwitch.class);
        m.put(SwapstreamConfig.THREADS, ThreadInfo.class);
        m.put(SwapstreamConfig.THREAD_STATS, ThreadStats.class);
        m.put(SwapstreamConfig.PROCESS_STATS, ProcessStats.class);
        m.put(SwapstreamConfig.HOST_STATS, HostStats.class);
        m.put(SwapstreamConfig.WAKE_EDGES, WakeEdge.class);
        VALUE_TYPES = java.util.Collections.unmodifiableMap(m);
    }
}
