package io.swapstream.stage;

import io.swapstream.schemas.SwapstreamConfig;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** A switch batch's number within its session: the {@value SwapstreamConfig#HEADER_BATCH_SEQUENCE} header, written and read. */
public final class BatchSequence {
    private BatchSequence() {}

    public static Headers header(long sequence) {
        return new RecordHeaders().add(SwapstreamConfig.HEADER_BATCH_SEQUENCE, Long.toString(sequence).getBytes(StandardCharsets.UTF_8));
    }

    /** The number a batch carries; -1 when it carries none (or not a number). */
    public static long of(Headers headers) {
        Header h = headers.lastHeader(SwapstreamConfig.HEADER_BATCH_SEQUENCE);
        if (h == null) return -1;
        try {
            return Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
