package io.swapstream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.schemas.SwapstreamConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopicSetupTest {
    /**
     * Topics keyed by session are compacted and also end with the broker's retention, or every session's
     * last records would stay for ever; the ingester's positions are compacted only (a file still being
     * followed must not lose its place).
     */
    @Test
    void topicsKeyedBySessionEndWithTheBrokersRetention() {
        Map<String, Map<String, String>> t = TopicSetup.topics();
        for (String perSession : new String[] {SwapstreamConfig.SESSIONS, SwapstreamConfig.THREADS, SwapstreamConfig.THREAD_STATS,
                SwapstreamConfig.WAKE_EDGES}) {
            assertEquals("compact,delete", t.get(perSession).get("cleanup.policy"), perSession);
        }
        assertEquals("compact", t.get(SwapstreamConfig.INGEST_POSITIONS).get("cleanup.policy"));
        assertEquals(null, t.get(SwapstreamConfig.SWITCH_BATCHES).get("cleanup.policy"), "deleted by retention, the broker's default");
    }
}
