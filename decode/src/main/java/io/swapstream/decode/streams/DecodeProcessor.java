package io.swapstream.decode.streams;

import io.swapstream.decode.MergeLimits;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.ThreadInfo;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.StageCounters;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.etw.BufferDecoder;
import io.swapstream.schemas.etw.EtlFormatException;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.etw.LogfileHeader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes raw buffers, one record each, per session with the offline {@link SessionDecoder}.
 * Its state, committed with the outputs: the decoder's own state (a checkpoint: lanes, queue, thread
 * table, clock), put every {@link SwapstreamConfig#DECODE_CHECKPOINT_BUFFERS} buffers or {@value #CHECKPOINT_BYTES} bytes,
 * the one before it, the buffers decoded since that one (at most twice that many, kept as references
 * to the input topic: a restarted instance restores the earlier checkpoint, reads them back and
 * decodes them again, sending only the batches again, with the numbers they had), the session's progress, and
 * buffers that arrived early, until the gap before them fills. A checkpoint per buffer would cost
 * its encoding, megabytes when the merge waits for a quiet processor, for every 64 KiB buffer.
 * A session ends with its end marker, or as incomplete after {@code idleTimeoutMs} without a buffer;
 * its state is dropped once its end record is read back from the sessions topic (see {@link #confirmEnds}). A buffer that fails its check is a dead letter; a failure after the
 * decoder's state changed cannot be undone record by record, so it stops the task, which restarts
 * from the last commit.
 */
final class DecodeProcessor implements Processor<String, byte[], String, Object> {
    private final int batchRows;
    private final boolean rows;
    private final long idleTimeoutMs;
    private final long retentionMs;
    /** A live session's merge limits; a session sent with its file's lateness waits for that instead. */
    private final MergeLimits liveLimits;
    private final String rawTopic;
    private ProcessorContext<String, Object> context;
    private InputRecordReader inputs;
    /**
     * A session's whole state, in one store: its progress (key: the session), its decoder's
     * checkpoint, its redo entries and early buffers (keys: {@link #PART}, a letter, the session: they
     * sort before every session, so a scan of the sessions' progress reads none of them).
     * One store is one changelog partition, so whatever a restore finds of it comes from the same
     * transactions; in stores of their own, progress and redo entries were once found out of step
     * after a broker's kill -9. Not cached: written in the order they are put, a checkpoint before
     * the progress that points past it.
     */
    private KeyValueStore<String, byte[]> state;
    static final long CHECKPOINT_BYTES = DecodeTopology.REDO_MAX_BYTES;
    /**
     * Buffers a checkpoint by bytes waits for: more than a stream thread processes between a commit asked for and
     * made (32 + 50, see apply), so the checkpoint before the last is in an earlier transaction with 1 MiB buffers too.
     */
    static final int MIN_BUFFERS_BY_BYTES = 128;
    private final int checkpointBuffers;
    /** Sessions decoded in this task's memory: a cache of what the stores hold. */
    private static final Logger LOG = LoggerFactory.getLogger(DecodeProcessor.class);
    private final Map<String, Live> live = new HashMap<>();
    /**
     * The first input offset this task has read since it was assigned (-1: none yet). A committed
     * offset that passed records the state never took can only have been the one it started at:
     * from here on, records come in order.
     */
    private long firstOffset = -1;

    /** Where end records go, and how they are kept until read back from there (see {@link #confirmEnds}). */
    private final String sessionTopic;
    private final org.apache.kafka.common.serialization.Serde<TraceSession> sessionRecords;
    private final long confirmMs;
    /** Whether this task has looked for the end records of the sessions it ended, since it was assigned. */
    private boolean endsLooked;
    /** Sessions ended and kept, as far as this task knows: none means no look at the sessions topic. */
    private long endsKept = -1;

    DecodeProcessor(String rawTopic, int batchRows, boolean rows, long idleTimeoutMs, int checkpointBuffers, String sessionTopic,
                    org.apache.kafka.common.serialization.Serde<TraceSession> sessionRecords, long confirmMs, long retentionMs,
                    MergeLimits liveLimits) {
        this.liveLimits = liveLimits;
        this.sessionTopic = sessionTopic;
        this.retentionMs = retentionMs;
        this.sessionRecords = sessionRecords;
        this.confirmMs = confirmMs;
        this.rawTopic = rawTopic;
        this.checkpointBuffers = checkpointBuffers;
        this.batchRows = batchRows;
        this.rows = rows;
        this.idleTimeoutMs = idleTimeoutMs;
    }

    /** A session being decoded in memory. */
    private final class Live {
        final String session;
        final DecodeProgress progress;
        final BufferDecoder buffer = new BufferDecoder();
        final SessionDecoder decoder;
        long timestamp;
        /**
         * Decoding buffers whose output went out in a committed transaction, to rebuild the decoder's
         * state: nothing is sent or counted again (exactly-once v2 committed it with the state).
         */
        boolean replaying;
        /**
         * How many of its buffers the store holds apart (arrived before their turn), so that taking the
         * next buffer in order does not ask the store for one it cannot hold: that miss read a block
         * from disk and was 14% of the decode thread (bench i16.etl, async-profiler).
         */
        long early;
        /** The session's out-of-order switches counted in the stage's metric so far. */
        long outOfOrderCounted;
        /** Bytes of its decoder's last checkpoint, for the metric. */
        long checkpointBytes;

        Live(String session, DecodeProgress p, byte[] checkpoint) {
            this.session = session;
            this.progress = p;
            MergeLimits limits = liveLimits.withFileLateness(p.latenessTicks);
            this.decoder = checkpoint == null
                    ? new SessionDecoder(p.host, p.maxWaitReason, this::batch, this::thread, batchRows, limits)
                    : SessionDecoder.restore(checkpoint, p.host, p.maxWaitReason, this::batch, this::thread, batchRows, limits);
        }

        private void batch(SwitchBatch b) {
            if (replaying) return;
            progress.switches += b.count();
            StageCounters.DECODE.switchesOut.add(b.count());
            context.forward(new Record<>(session, b, timestamp, BatchSequence.header(progress.batches++)));
            // a new session's first switches reach the aggregate now, not up to a commit interval later
            if (progress.batches == 1) context.commit();
            if (rows) for (int i = 0; i < b.count(); i++) forward(session, AvroRecords.of(b.row(i)), timestamp);
        }

        private void thread(ThreadInfo t) {
            if (replaying) return;
            progress.threads++;
            forward(AvroRecords.threadKey(session, t.threadId()), AvroRecords.of(t), timestamp);
        }
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.state = context.getStateStore(DecodeTopology.PROGRESS_STORE);
        this.inputs = InputRecordReader.of(context, "decode-redo");
        forgetAll();
        firstOffset = -1;
        long every = Math.max(100, Math.min(idleTimeoutMs / 4, 10_000));
        context.schedule(Duration.ofMillis(every), PunctuationType.WALL_CLOCK_TIME, this::endIdleSessions);
        endsLooked = false;
        endsKept = -1;
        if (confirmMs > 0) context.schedule(Duration.ofMillis(confirmMs), PunctuationType.WALL_CLOCK_TIME, now -> confirmEnds(false));
    }

    @Override
    public void close() {
        forgetAll();
        if (inputs != null) inputs.close();
    }

    @Override
    public void process(Record<String, byte[]> record) {
        if (!endsLooked) confirmEnds(true);
        StageCounters.DECODE.recordsIn.increment();
        if (firstOffset < 0) context.recordMetadata().ifPresent(m -> firstOffset = m.offset());
        String session = record.key();
        Headers headers = record.headers();
        if (session == null || session.isEmpty() || session.indexOf(PART) >= 0) {
            deadLetter(session, headers, record.value(), "no-session-key", session == null || session.isEmpty()
                    ? "raw buffer without a session key" : "raw buffer whose session key holds a NUL character", record.timestamp());
            return;
        }
        Live known = live.get(session);
        DecodeProgress p = known != null ? known.progress : stored(session);
        if (p.ended()) {
            // a restarted ingester sends its last transaction's buffers again when it cannot find them in the topic
            long index = parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_INDEX, "-1"));
            if (headers.lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null || index >= 0 && index < p.next) return;
            deadLetter(session, headers, record.value(), "after-session-end", "session " + session + " has ended (" + p.endReason
                    + "): a buffer that came after its end", record.timestamp());
            return;
        }
        if (p.host == null) {
            p.host = header(headers, SwapstreamConfig.HEADER_HOST, LogfileHeader.hostOf(session));
            p.maxWaitReason = maxWaitReason(headers);
            p.latenessTicks = parseLong(header(headers, SwapstreamConfig.HEADER_LATENESS_TICKS, "-1"));
        }
        p.lastBufferMs = context.currentSystemTimeMs();
        if (headers.lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null) {
            Live l = live(session, p, record.timestamp());
            if (lookForGap(session, p)) drain(l);
            end(l, headers, "end-marker");
            return;
        }
        long index = parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_INDEX, "-1"));
        if (index < 0) index = p.next; // no index: take arrival order
        if (index < p.next) { // a re-run ingest resent a buffer this session already has
            state.put(session, p.encode());
            return;
        }
        byte[] bytes = record.value() == null ? new byte[0] : record.value();
        if (index > p.next) {
            lookForGap(session, p);
            holdApart(session, index, bytes);
            if (state.get(earlyKey(session, p.next)) == null) {
                state.put(session, p.encode());
                return;
            }
            Live l = live(session, p, record.timestamp());
            drain(l);
            save(l);
            return;
        }
        Live l = live(session, p, record.timestamp());
        apply(l, bytes, headers, InputRecordReader.reference(context));
        context.recordMetadata().ifPresent(m -> {
            p.lastInputPartition = m.partition();
            p.lastInput = m.offset();
        });
        drain(l);
        save(l);
    }

    private void forget(String session) {
        live.remove(session);
        StageCounters.DECODE.merges.remove(session);
    }

    private void forgetAll() {
        live.keySet().forEach(StageCounters.DECODE.merges::remove);
        live.clear();
    }

    /** Takes the buffers held apart that follow the last one taken, in order. */
    private void drain(Live l) {
        DecodeProgress p = l.progress;
        byte[] next;
        while (l.early > 0 && (next = state.get(earlyKey(l.session, p.next))) != null) {
            StateStores.remove(state, earlyKey(l.session, p.next));
            l.early--;
            apply(l, next, new RecordHeaders(), InputRecordReader.copy(next));
        }
    }

    /** True when a session's decoder is due a checkpoint, {@code buffers} and {@code bytes} after the last. */
    static boolean checkpointDue(long buffers, long bytes, int checkpointBuffers) {
        return buffers >= checkpointBuffers || bytes >= CHECKPOINT_BYTES && buffers >= MIN_BUFFERS_BY_BYTES;
    }

    /** Holds buffer {@code index} apart until its turn; false when it is held already. */
    private boolean holdApart(String session, long index, byte[] bytes) {
        String key = earlyKey(session, index);
        if (state.get(key) != null) return false;
        state.put(key, bytes);
        Live l = live.get(session);
        if (l != null) l.early++; // else counted when the session is next in memory
        return true;
    }

    /** The keys of the session's buffers held apart. */
    private List<String> earlyKeys(String session) {
        List<String> keys = new ArrayList<>();
        String early = earlyPrefix(session);
        try (KeyValueIterator<String, byte[]> it = state.range(early, early + "\uffff")) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    /**
     * Looks in the input topic, between the last buffer taken in order and the record being
     * processed, for this session's buffers the state does not have, and holds them apart to be
     * taken in order. After a broker's kill -9 a transaction was seen to commit its input offsets
     * while its state and outputs were aborted (BrokerCrashIT loop, run 512): the consumer went on
     * past buffers the state never took, and the session ended without them. Reads only when a
     * buffer comes after a gap, or at the session's end; false when it did not look.
     */
    private boolean lookForGap(String session, DecodeProgress p) {
        RecordMetadata m = context.recordMetadata().orElse(null);
        if (m == null || p.lastInput < 0 || m.partition() != p.lastInputPartition || m.offset() <= p.lastInput + 1) return false;
        if (!lookForGap(session, p, new TopicPartition(m.topic(), m.partition()), m.offset(), null)) return false;
        p.lastInput = m.offset();
        return true;
    }

    /**
     * Looks between the last buffer taken in order and {@code until}; {@code end}, when given, gets
     * the session's end marker's headers if it is there. False when the topic could not be read.
     */
    private boolean lookForGap(String session, DecodeProgress p, TopicPartition tp, long until, Headers[] end) {
        long from = p.lastInput + 1;
        long[] found = {0};
        try {
            inputs.scan(tp, from, until, r -> {
                if (r.key() == null || !session.equals(new String(r.key(), StandardCharsets.UTF_8))) return;
                if (r.headers().lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null) {
                    if (end != null) end[0] = r.headers();
                    return;
                }
                long index = parseLong(header(r.headers(), SwapstreamConfig.HEADER_BUFFER_INDEX, "-1"));
                if (index >= p.next && holdApart(session, index, r.value() == null ? new byte[0] : r.value())) found[0]++;
            });
        } catch (KafkaException | IllegalStateException e) {
            // not readable now: the buffers stay missing unless they come, and the next gap looks again
            LOG.warn("could not look for the missing buffers of session {} in {} from offset {}: {}", session, tp, from, e.getMessage());
            return false;
        }
        if (found[0] > 0) {
            LOG.warn("session {}: {} buffer(s) from index {} were in {} between offsets {} and {} but not in the committed"
                    + " state; taken again", session, found[0], p.next, tp, from, until);
        }
        if (end != null && end[0] != null) {
            LOG.warn("session {}: its end marker was in {} between offsets {} and {} but not in the committed state; taken", session,
                    tp, from, until);
        }
        // what lies before this record is known now: a later gap is looked for after it
        p.lastInput = until - 1;
        return true;
    }

    /**
     * The session in memory, or restored with progress {@code p} (what the store holds): its
     * checkpoint, then the buffers decoded since, again, without output.
     */
    private Live live(String session, DecodeProgress p, long timestamp) {
        Live l = live.get(session);
        if (l == null) {
            // from the last checkpoint: the transaction that put it committed the outputs before it too
            long from = p.checkpointNext;
            byte[] checkpoint = from == 0 ? null : state.get(checkpointKey(session, p.checkpoints));
            l = new Live(session, p, checkpoint == null ? null : Checkpoint.decoder(checkpoint));
            l.timestamp = timestamp;
            l.replaying = true;
            for (long i = from; i < p.next; i++) {
                byte[] entry = state.get(redoKey(session, i));
                if (entry == null) {
                    throw new IllegalStateException("buffer " + i + " of session " + session + " is missing from the redo entries"
                            + " (progress: next buffer " + p.next + ", checkpoints at " + from + " and " + p.checkpointNext + ", "
                            + (checkpoint == null ? "none" : "one") + " stored from " + from + ")");
                }
                String source = session + " buffer " + i;
                byte[] bytes = inputs.value(rawTopic, entry);
                try {
                    l.buffer.loadPublished(source, 0, bytes, 0, bytes.length);
                    SessionDecoder.check(l.buffer);
                    l.decoder.onBuffer(l.buffer, 0, source);
                } catch (EtlFormatException e) {
                    continue; // a dead letter the first time round
                }
            }
            l.replaying = false;
            l.outOfOrderCounted = l.decoder.counters().switchesOutOfOrder;
            l.early = earlyKeys(session).size();
            live.put(session, l);
        }
        l.timestamp = timestamp;
        return l;
    }

    /** Decodes the next buffer of the session, {@code bytes}; {@code redoEntry} is what the redo store keeps of it. */
    private void apply(Live l, byte[] bytes, Headers headers, byte[] redoEntry) {
        DecodeProgress p = l.progress;
        long index = p.next++;
        state.put(redoKey(l.session, index), redoEntry);
        p.redoBytes += bytes.length;
        decode(l, index, bytes, headers);
        // here, not once per record: the buffers since the last checkpoint must fit the redo slots
        if (checkpointDue(p.next - p.checkpointNext, p.redoBytes, checkpointBuffers)) {
            // a restore starts at this checkpoint, committed with the outputs before it: the redo entries before it go
            long drop = p.checkpointNext;
            p.checkpointNext = p.next;
            p.previousCheckpointNext = p.checkpointNext;
            p.checkpoints++;
            p.redoBytes = 0;
            // the progress goes in with it: found without the progress put after it, it still says where it ends
            byte[] decoderState = l.decoder.checkpoint();
            l.checkpointBytes = decoderState.length;
            state.put(checkpointKey(l.session, p.checkpoints), Checkpoint.encode(p, decoderState));
            StateStores.remove(state, checkpointKey(l.session, p.checkpoints - 1));
            for (long i = drop; i < p.checkpointNext; i++) StateStores.remove(state, redoKey(l.session, i));
        }
    }

    private void decode(Live l, long index, byte[] bytes, Headers headers) {
        DecodeProgress p = l.progress;
        StageCounters.DECODE.buffersIn.increment();
        String source = header(headers, SwapstreamConfig.HEADER_SOURCE_FILE, l.session) + " buffer " + index;
        long offset = parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_INDEX, "-1")) == index
                ? Math.max(0, parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_OFFSET, "0"))) : 0;
        try {
            l.buffer.loadPublished(source, offset, bytes, 0, bytes.length);
            SessionDecoder.check(l.buffer); // a malformed buffer changes nothing
            // refuses only a session's first buffer (no logfile header, a clock it cannot read): before any change
            l.decoder.onBuffer(l.buffer, offset, source);
        } catch (EtlFormatException e) {
            p.deadLetters++;
            lost(p, e.getMessage());
            deadLetter(l.session, headers, bytes, "malformed-buffer", e.getMessage(), l.timestamp);
            return;
        }
        long outOfOrder = l.decoder.counters().switchesOutOfOrder;
        if (outOfOrder > l.outOfOrderCounted) {
            StageCounters.DECODE.switchesOutOfOrder.add(outOfOrder - l.outOfOrderCounted);
            l.outOfOrderCounted = outOfOrder;
        }
        StageCounters.DECODE.switchAt(l.decoder.lastEmittedNanos());
        StageCounters.DECODE.merges.put(l.session, new long[] {l.decoder.queued(), l.checkpointBytes});
        if (!p.sessionEmitted && l.decoder.session() != null) {
            p.sessionEmitted = true;
            forward(l.session, AvroRecords.of(l.decoder.session()).setBuffers(p.next).build(), l.timestamp);
        }
    }

    private void save(Live l) {
        state.put(l.session, l.progress.encode());
    }

    /**
     * The session's progress as stored: the progress record, or the one put with the checkpoint when
     * that one is further on (a checkpoint is written before the progress that points past it).
     */
    private DecodeProgress stored(String session) {
        DecodeProgress p = DecodeProgress.decode(state.get(session));
        if (p.ended()) return p;
        DecodeProgress furthest = p;
        for (long n = 1; n <= 2; n++) { // both keys: the progress may be one checkpoint behind
            byte[] checkpoint = state.get(checkpointKey(session, n));
            if (checkpoint == null) continue;
            DecodeProgress atCheckpoint = Checkpoint.progress(checkpoint);
            if (atCheckpoint.next > furthest.next) furthest = atCheckpoint;
        }
        return furthest;
    }

    /** A checkpoint's value: the session's progress as of the checkpoint, then the decoder's checkpoint. */
    private static final class Checkpoint {
        static byte[] encode(DecodeProgress p, byte[] decoder) {
            byte[] progress = p.encode();
            return java.nio.ByteBuffer.allocate(4 + progress.length + decoder.length).putInt(progress.length).put(progress)
                    .put(decoder).array();
        }

        static DecodeProgress progress(byte[] value) {
            int n = java.nio.ByteBuffer.wrap(value).getInt();
            return DecodeProgress.decode(java.util.Arrays.copyOfRange(value, 4, 4 + n));
        }

        static byte[] decoder(byte[] value) {
            int n = java.nio.ByteBuffer.wrap(value).getInt();
            return java.util.Arrays.copyOfRange(value, 4 + n, value.length);
        }
    }

    private static void lost(DecodeProgress p, String reason) {
        if (p.lossReasons.size() < 10) p.lossReasons.add(reason);
    }

    /** Ends the session: the decoder's last switches, the session record, and its state freed. */
    private void end(Live l, Headers headers, String reason) {
        DecodeProgress p = l.progress;
        long lost = p.deadLetters;
        long announced = headers == null ? -1 : parseLong(header(headers, SwapstreamConfig.HEADER_END_OF_SESSION, "-1"));
        if (announced > p.next) {
            String why = "buffer " + p.next + " never arrived, so buffers " + p.next + " to " + (announced - 1)
                    + " of session " + l.session + " were not decoded";
            deadLetter(l.session, headers, new byte[0], "missing-buffers", why, l.timestamp);
            lost(p, why);
            lost += announced - p.next;
        }
        long atIngest = headers == null ? 0 : Math.max(0, parseLong(header(headers, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, "0")));
        if (atIngest > 0) {
            lost += atIngest;
            lost(p, "ingest: " + header(headers, SwapstreamConfig.HEADER_INGEST_ERROR, "buffers went to the dead letters"));
        }
        if (reason.equals("idle-timeout")) {
            lost(p, "no buffer for " + idleTimeoutMs / 1000 + " s: the session was ended as incomplete");
        }
        l.decoder.finish();
        StageCounters.DECODE.buffersLost.add(lost);
        boolean keep = false;
        if (l.decoder.session() != null) {
            StageCounters.DECODE.eventsLost.add(Math.max(0, l.decoder.session().eventsLost()));
            var c = l.decoder.counters();
            if (c.switchesOutOfOrder > 0) {
                lost(p, c.switchesOutOfOrder + " switches came after later ones had been emitted (the merge's maximum lateness or"
                        + " memory cap let those out first): they have no derived times");
            }
            // a session that lost anything, was cut short or has switches out of order is never presented as complete
            TraceSession record = AvroRecords.of(l.decoder.session())
                    .setComplete(lost == 0 && c.switchesOutOfOrder == 0 && reason.equals("end-marker"))
                    .setSwitchesOutOfOrder(c.switchesOutOfOrder).setMaxLatenessNanos(l.decoder.maxLatenessNanos())
                    .setEndReason(reason).setBuffers(p.next).setSwitchCount(p.switches).setThreadRecords(p.threads)
                    .setDeadLetters(lost).setLossReasons(new ArrayList<>(p.lossReasons))
                    .setInconsistencies(c.oldThreadNotLastSwitchedIn).build();
            forward(l.session, record, l.timestamp);
            keep = confirmMs > 0;
            if (keep) {
                // the progress as yet unended, its checkpoints where a restore starts: kept with the end record, to send both again
                state.put(endedKey(l.session), EndedSession.encode(p.encode(), l.timestamp, sessionRecords.serializer().serialize(sessionTopic, record)));
                endsKept = Math.max(endsKept, 0) + 1;
            }
        } else {
            deadLetter(l.session, headers == null ? new RecordHeaders() : headers, new byte[0], "no-logfile-header",
                    "session " + l.session + " ended without a readable logfile header", l.timestamp);
        }
        long redoFrom = p.previousCheckpointNext;
        p.previousCheckpointNext = p.next;
        p.checkpointNext = p.next;
        p.redoBytes = 0;
        p.endReason = reason;
        p.endedMs = context.currentSystemTimeMs();
        state.put(l.session, p.encode()); // first: whatever of the rest a cut-short end leaves, an ended session never reads
        earlyKeys(l.session).forEach(k -> StateStores.remove(state, k));
        if (!keep) { // else kept until the end record is read back
            for (long i = redoFrom; i < p.next; i++) StateStores.remove(state, redoKey(l.session, i));
            StateStores.remove(state, checkpointKey(l.session, 1));
            StateStores.remove(state, checkpointKey(l.session, 2));
        }
        forget(l.session);
        StageCounters.DECODE.sessionsEnded.increment();
        // the session's last batches and its end record reach read_committed readers now, not up to a commit interval later
        context.commit();
    }

    /**
     * Reads the end records of the sessions this task ended and kept back from its partition of the
     * sessions topic, from where it last looked to its last stable offset, and forgets what it kept of
     * those it finds. After a broker's kill -9 a transaction was seen committed on this stage's
     * changelog and aborted on its outputs (BrokerCrashIT loop, run 1143): the one that ends a session
     * would leave the session ended in the state, and its last batches and end record lost, with
     * nothing to send them again. So an ended session keeps its two checkpoints, its redo entries and
     * its end record until the record is read back; when the task starts ({@code starting}), it sends
     * again what it finds missing: the batches since the checkpoint before the last, numbered as
     * before, and the end record (the sessions topic is compacted by session, and the aggregate takes
     * one end).
     */
    private void confirmEnds(boolean starting) {
        if (confirmMs <= 0) return;
        if (starting) endsLooked = true;
        if (endsKept == 0) return;
        Map<String, byte[]> kept = new HashMap<>();
        try (KeyValueIterator<String, byte[]> it = state.range(ENDED_KEYS, ENDED_KEYS + "\uffff")) {
            it.forEachRemaining(kv -> kept.put(kv.key.substring(ENDED_KEYS.length()), kv.value));
        }
        endsKept = kept.size();
        if (kept.isEmpty()) return;
        TopicPartition tp = new TopicPartition(sessionTopic, context.taskId().partition());
        byte[] meta = state.get(ENDS_LOOKED_TO);
        long end;
        try {
            end = inputs.endOffset(tp);
            long begin = inputs.beginningOffset(tp);
            long from = meta != null ? java.nio.ByteBuffer.wrap(meta).getLong() : end - SwapstreamConfig.READ_BACK_RECORDS;
            var records = sessionRecords.deserializer();
            inputs.scan(tp, Math.max(from, begin), end, r -> {
                String session = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
                if (session == null || r.value() == null || !kept.containsKey(session)) return;
                if (records.deserialize(sessionTopic, r.value()).getEndReason() == null) return;
                forgetEnded(session, kept.remove(session));
            });
        } catch (KafkaException | IllegalStateException e) {
            if (starting) throw new KafkaException("could not read back the end records of the sessions this task ended: " + e.getMessage(), e);
            LOG.warn("could not read back the end records of the sessions this task ended from {}: {}", tp, e.getMessage());
            return;
        }
        state.put(ENDS_LOOKED_TO, java.nio.ByteBuffer.allocate(8).putLong(end).array());
        if (starting) kept.forEach(this::sendEndAgain);
        endsKept = kept.size();
    }

    /** The last batches and the end record of a session the state has ended, sent again: the topics lack its end record. */
    private void sendEndAgain(String session, byte[] kept) {
        DecodeProgress before = EndedSession.progress(kept);
        Live l = live(session, before, EndedSession.timestamp(kept));
        l.replaying = true;
        l.decoder.finish();
        l.replaying = false;
        forget(session);
        context.forward(new Record<>(session, sessionRecords.deserializer().deserialize(sessionTopic, EndedSession.record(kept)),
                EndedSession.timestamp(kept)));
        LOG.warn("session {}: the state has ended it, and its end record was not in {}: its end record sent again", session,
                sessionTopic);
    }

    /** What the state kept of an ended session to send its end again: gone once the end record is read back. */
    private void forgetEnded(String session, byte[] kept) {
        DecodeProgress before = EndedSession.progress(kept);
        for (long i = before.previousCheckpointNext; i < before.next; i++) StateStores.remove(state, redoKey(session, i));
        StateStores.remove(state, checkpointKey(session, 1));
        StateStores.remove(state, checkpointKey(session, 2));
        StateStores.remove(state, endedKey(session));
    }

    /** An ended session's progress before its end (where a restore starts), the end's record timestamp, and its end record. */
    private static final class EndedSession {
        static byte[] encode(byte[] progress, long timestamp, byte[] record) {
            return java.nio.ByteBuffer.allocate(12 + progress.length + record.length).putInt(progress.length).put(progress)
                    .putLong(timestamp).put(record).array();
        }

        static DecodeProgress progress(byte[] value) {
            return Checkpoint.progress(value);
        }

        static long timestamp(byte[] value) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(value);
            return b.getLong(4 + b.getInt(0));
        }

        static byte[] record(byte[] value) {
            int n = java.nio.ByteBuffer.wrap(value).getInt();
            return java.util.Arrays.copyOfRange(value, 12 + n, value.length);
        }
    }

    /** Ends, as incomplete, every open session that has had no buffer for the idle timeout. */
    private void endIdleSessions(long now) {
        if (!endsLooked) confirmEnds(true);
        List<KeyValue<String, DecodeProgress>> idle = new ArrayList<>();
        List<KeyValue<String, DecodeProgress>> endNoted = new ArrayList<>();
        List<String> expired = new ArrayList<>();
        int open = 0;
        // from the first key after the parts: progress records only, never a checkpoint's megabytes
        try (KeyValueIterator<String, byte[]> it = state.range(String.valueOf((char) (PART + 1)), null)) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                DecodeProgress p = DecodeProgress.decode(kv.value);
                if (p.ended()) {
                    // a service takes sessions for ever: an ended one leaves once its retention has passed
                    if (p.endedMs <= 0) {
                        p.endedMs = now;
                        endNoted.add(KeyValue.pair(kv.key, p));
                    } else if (now - p.endedMs >= retentionMs) {
                        expired.add(kv.key);
                    }
                    continue;
                }
                open++;
                if (now - p.lastBufferMs >= idleTimeoutMs) idle.add(KeyValue.pair(kv.key, p));
            }
        }
        StageCounters.DECODE.sessionsOpen.set(open - idle.size());
        endNoted.forEach(kv -> state.put(kv.key, kv.value.encode()));
        for (String session : expired) {
            // its end record not yet read back: kept until it is (confirmEnds)
            if (state.get(endedKey(session)) != null) continue;
            StateStores.remove(state, session);
            StageCounters.DECODE.sessionsForgotten.increment();
            LOG.info("session {} ended more than {} s ago: it left the store (a buffer of it now would start it again)", session,
                    retentionMs / 1000);
        }
        for (KeyValue<String, DecodeProgress> kv : idle) {
            Live l = live(kv.key, live.containsKey(kv.key) ? kv.value : stored(kv.key), now);
            DecodeProgress p = l.progress;
            // its last buffers and end marker may lie before where this task started, passed by a committed
            // offset without the state taking them (the gap case of lookForGap, with nothing after to show it)
            Headers[] endMarker = {null};
            long next = p.next;
            if (p.lastInput >= 0 && p.lastInputPartition == context.taskId().partition()) {
                TopicPartition tp = new TopicPartition(rawTopic, p.lastInputPartition);
                try {
                    long until = firstOffset >= 0 ? firstOffset : inputs.endOffset(tp);
                    if (until > p.lastInput + 1) lookForGap(kv.key, p, tp, until, endMarker);
                } catch (KafkaException | IllegalStateException e) {
                    LOG.warn("could not look for the end of session {} in {}: {}", kv.key, tp, e.getMessage());
                }
                drain(l);
            }
            if (endMarker[0] != null) {
                end(l, endMarker[0], "end-marker");
            } else if (p.next > next) {
                p.lastBufferMs = now;
                save(l);
            } else {
                end(l, null, "idle-timeout");
            }
        }
    }

    private void forward(String key, Object value, long ts) {
        context.forward(new Record<>(key, value, ts));
    }

    private void deadLetter(String key, Headers in, byte[] bytes, String kind, String reason, long ts) {
        StageCounters.DECODE.deadLetter(kind);
        RecordHeaders h = new RecordHeaders();
        for (Header x : in) h.add(x);
        h.add(SwapstreamConfig.HEADER_ERROR, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "decode".getBytes(StandardCharsets.UTF_8));
        context.forward(new Record<>(key, new DeadLetter(bytes, reason), ts, h));
    }

    /**
     * A buffer's key in the redo store: one of {@value SwapstreamConfig#REDO_SLOTS} slots, deleted at the
     * next checkpoint and reused, so the changelog compacts to those slots however long the session runs.
     */
    static String redoKey(String session, long index) {
        return "" + PART + REDO + session + PART + (index % SwapstreamConfig.REDO_SLOTS);
    }

    static String endedKey(String session) {
        return ENDED_KEYS + session;
    }


    static String earlyKey(String session, long index) {
        return earlyPrefix(session) + String.format("%012d", index);
    }

    private static String earlyPrefix(String session) {
        return "" + PART + EARLY + session + PART;
    }

    /** The key of a session's {@code n}-th checkpoint: one of two, by n's parity (the first is where version 2 kept its one). */
    static String checkpointKey(String session, long n) {
        return "" + PART + (n % 2 == 1 ? CHECKPOINT : OTHER_CHECKPOINT) + session;
    }

    /** The part of a session's state a key of the store holds: a letter, or 0 for its progress. */
    static char partOf(String key) {
        return key.length() > 1 && key.charAt(0) == PART ? key.charAt(1) : 0;
    }

    /** Opens the key of a part of a session's state (and ends the session in it): no session key holds it. */
    static final char PART = '\u0000';
    private static final char CHECKPOINT = 'c';
    private static final char OTHER_CHECKPOINT = 'p';
    private static final char REDO = 'r';
    private static final char EARLY = 'e';
    /** Keys of ended sessions' kept end records (see confirmEnds). */
    private static final String ENDED_KEYS = "" + PART + 'f';
    /** Where the last look for end records ended in the sessions topic (a key no session's holds). */
    private static final String ENDS_LOOKED_TO = "" + PART + 'F';

    private static Integer maxWaitReason(Headers h) {
        String v = header(h, SwapstreamConfig.HEADER_MAX_WAIT_REASON, null);
        if (v == null) return null;
        try {
            int n = Integer.decode(v.trim());
            return n > 0 && n <= 0x3F ? n : null;
        } catch (NumberFormatException e) {
            return null; // not a number: decode by the trace's build, as without the header
        }
    }

    private static String header(Headers h, String name, String otherwise) {
        Header x = h.lastHeader(name);
        return x == null ? otherwise : new String(x.value(), StandardCharsets.UTF_8);
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The session a record belongs to, from its key. */
    static String sessionOf(String key) {
        return SessionPartitioner.session(key);
    }
}
