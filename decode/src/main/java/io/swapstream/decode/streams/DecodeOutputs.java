package io.swapstream.decode.streams;

import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.stage.BatchSequence;
import io.swapstream.stage.IncompleteFrom;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The decode stage's outputs, each to its own named sink with its own type: the processor forwards a
 * switch batch only to the batches' sink, whose serializer takes only batches.
 */
final class DecodeOutputs {
    static final String BATCHES = "to-switch-batches";
    static final String SWITCHES = "to-context-switches";
    static final String THREADS = "to-threads";
    static final String SESSIONS = "to-sessions";
    static final String DEAD_LETTERS = "to-dead-letters";

    private final ProcessorContext<String, Object> context;

    DecodeOutputs(ProcessorContext<String, Object> context) {
        this.context = context;
    }

    /**
     * A batch, numbered {@code sequence} in its session (header {@value SwapstreamConfig#HEADER_BATCH_SEQUENCE}); with
     * {@code incompleteFrom} (not null) the time from which its session's times are not known (header
     * {@value SwapstreamConfig#HEADER_INCOMPLETE_FROM}).
     */
    void batch(String session, SwitchBatch batch, long sequence, long timestamp, Long incompleteFrom) {
        Headers h = BatchSequence.header(sequence);
        if (incompleteFrom != null) IncompleteFrom.add(h, incompleteFrom);
        context.forward(new Record<String, SwitchBatch>(session, batch, timestamp, h), BATCHES);
    }

    void contextSwitch(String session, ContextSwitch row, long timestamp, Long incompleteFrom) {
        Headers h = new RecordHeaders();
        if (incompleteFrom != null) IncompleteFrom.add(h, incompleteFrom);
        context.forward(new Record<String, ContextSwitch>(session, row, timestamp, h), SWITCHES);
    }

    void thread(String session, ThreadInfo thread, long timestamp) {
        context.forward(new Record<String, ThreadInfo>(AvroRecords.threadKey(session, thread.getThreadId()), thread, timestamp), THREADS);
    }

    void session(String session, TraceSession record, long timestamp) {
        context.forward(new Record<String, TraceSession>(session, record, timestamp), SESSIONS);
    }

    /** The input's bytes unchanged, its headers and two more: why, and which stage. */
    void deadLetter(String key, Headers in, byte[] bytes, String reason, long timestamp) {
        RecordHeaders h = new RecordHeaders();
        for (Header x : in) h.add(x);
        h.add(SwapstreamConfig.HEADER_ERROR, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "decode".getBytes(StandardCharsets.UTF_8));
        context.forward(new Record<String, byte[]>(key, bytes, timestamp, h), DEAD_LETTERS);
    }
}
