package io.swapstream.decode.streams;

import io.swapstream.schemas.SwapstreamConfig;
import org.apache.kafka.common.header.Headers;

/**
 * What a session's end marker says of it: the buffers the ingester announced ({@code -1} unknown), how many it sent to the
 * dead letters, and why the session is incomplete (null: it is not, as far as the ingester knows).
 */
record IngestEnd(long announced, long deadLetters, String error) {
    static final IngestEnd NONE = new IngestEnd(-1, 0, null);

    static IngestEnd of(Headers h) {
        if (h == null) return NONE;
        return new IngestEnd(RawBufferHeaders.number(h, SwapstreamConfig.HEADER_END_OF_SESSION),
                Math.max(0, RawBufferHeaders.number(h, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS)),
                RawBufferHeaders.text(h, SwapstreamConfig.HEADER_INGEST_ERROR, null));
    }

    /** The file framed whole but holds less than its logger wrote (cut at a buffer's end): nothing went to the dead letters. */
    boolean cutShort() {
        return deadLetters == 0 && error != null;
    }
}
