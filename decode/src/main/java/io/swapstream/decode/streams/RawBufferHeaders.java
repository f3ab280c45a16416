package io.swapstream.decode.streams;

import io.swapstream.schemas.SwapstreamConfig;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** What the ingester says of a raw buffer in its record's headers: read leniently, as a missing or bad value means "not said". */
final class RawBufferHeaders {
    private RawBufferHeaders() {}

    /** The headers the stage reads: a record that names one without a value is refused whole ({@link #valueless}). */
    private static final String[] READ = {
        SwapstreamConfig.HEADER_HOST, SwapstreamConfig.HEADER_SOURCE_FILE, SwapstreamConfig.HEADER_BUFFER_INDEX,
        SwapstreamConfig.HEADER_BUFFER_OFFSET, SwapstreamConfig.HEADER_END_OF_SESSION, SwapstreamConfig.HEADER_MAX_WAIT_REASON,
        SwapstreamConfig.HEADER_LATENESS_TICKS, SwapstreamConfig.HEADER_FLUSH_TIMER_MS, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS,
        SwapstreamConfig.HEADER_INGEST_ERROR
    };

    /**
     * The first header the stage reads that is there without a value, else null. No ingester sends one,
     * so its sender is not one: guessing what it meant (the session's host, or the buffer's place) could
     * put its buffer into another's session.
     */
    static String valueless(Headers h) {
        for (String name : READ) {
            for (Header x : h.headers(name)) {
                if (x.value() == null) return name;
            }
        }
        return null;
    }

    static String text(Headers h, String name, String otherwise) {
        Header x = h.lastHeader(name);
        return x == null || x.value() == null ? otherwise : new String(x.value(), StandardCharsets.UTF_8);
    }

    /** A whole number the header holds; -1 when absent or not a number. */
    static long number(Headers h, String name) {
        try {
            return Long.parseLong(text(h, name, "-1").trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static boolean endOfSession(Headers h) {
        return h.lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null;
    }

    /** The buffer's offset in its file, when its index header says it is buffer {@code index}; else 0. */
    static long fileOffset(Headers h, long index) {
        return number(h, SwapstreamConfig.HEADER_BUFFER_INDEX) == index ? Math.max(0, number(h, SwapstreamConfig.HEADER_BUFFER_OFFSET)) : 0;
    }

    /** The trace's largest wait reason, when sent and in range; else null (decode by the trace's build). */
    static Integer maxWaitReason(Headers h) {
        String v = text(h, SwapstreamConfig.HEADER_MAX_WAIT_REASON, null);
        if (v == null) return null;
        try {
            int n = Integer.decode(v.trim());
            return n > 0 && n <= 0x3F ? n : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
