package io.swapstream.aggregate.streams;

import io.swapstream.schemas.avro.TraceSession;

/**
 * One record of the aggregate's input, of either of its two topics (both partitioned by session): a
 * switch batch as published (the processor notes where it sits for its redo log, as well as reading it),
 * or a decode stage session record, which says when every batch of the session has been sent.
 */
record AggregateInput(byte[] batch, TraceSession session) {
    static AggregateInput batch(byte[] bytes) {
        return new AggregateInput(bytes, null);
    }

    static AggregateInput session(TraceSession record) {
        return new AggregateInput(null, record);
    }
}
