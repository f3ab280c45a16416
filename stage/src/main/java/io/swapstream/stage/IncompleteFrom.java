package io.swapstream.stage;

import io.swapstream.schemas.SwapstreamConfig;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The time from which a session's switches are not all known: the {@value SwapstreamConfig#HEADER_INCOMPLETE_FROM}
 * header, written and read.
 */
public final class IncompleteFrom {
    private IncompleteFrom() {}

    /** Adds the header saying that times from {@code unixNanos} on are not known; returns {@code headers}. */
    public static Headers add(Headers headers, long unixNanos) {
        return headers.add(SwapstreamConfig.HEADER_INCOMPLETE_FROM, Long.toString(unixNanos).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The time a record's header gives, Unix ns: {@link Long#MIN_VALUE} when no time is known; null when the record
     * carries no such header, as every record of a session that ended complete. One that is not a number knows nothing.
     */
    public static Long of(Headers headers) {
        Header h = headers.lastHeader(SwapstreamConfig.HEADER_INCOMPLETE_FROM);
        if (h == null) return null;
        try {
            return Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            return Long.MIN_VALUE;
        }
    }
}
