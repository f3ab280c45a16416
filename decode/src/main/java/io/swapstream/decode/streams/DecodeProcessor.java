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
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes raw buffers, one record each, per session with the offline {@link SessionDecoder}.
 * Its state, committed with the outputs under exactly-once v2: the decoder's own state (a checkpoint:
 * lanes, queue, thread table, clock), put every {@link SwapstreamConfig#DECODE_CHECKPOINT_BUFFERS}
 * buffers or {@value #CHECKPOINT_BYTES} bytes, the buffers decoded since (kept as references to the
 * input topic: a restarted or moved task restores the checkpoint, reads them back and decodes them
 * again, sending nothing: their outputs were committed with the state), the session's progress, and
 * buffers that arrived early, until the gap before them fills. A checkpoint per buffer would cost
 * its encoding, megabytes when the merge waits for a quiet processor, for every 64 KiB buffer.
 * A session ends with its end marker, or as incomplete after {@code idleTimeoutMs} without a buffer.
 * A buffer that fails its check is a dead letter; a failure after the decoder's state changed cannot
 * be undone record by record, so it stops the task, which restarts from the last commit.
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
     * One store is one changelog partition, so a restore finds all of a session's state as of one
     * transaction. Not cached: written in the order they are put, a checkpoint before the progress
     * that points past it.
     */
    private KeyValueStore<String, byte[]> state;
    static final long CHECKPOINT_BYTES = DecodeTopology.REDO_MAX_BYTES;
    /** Buffers a checkpoint by bytes waits for: with 1 MiB buffers, not one every 32 (each encodes what the merge holds). */
    static final int MIN_BUFFERS_BY_BYTES = 128;
    private final int checkpointBuffers;
    /** Sessions decoded in this task's memory: a cache of what the stores hold. */
    private static final Logger LOG = LoggerFactory.getLogger(DecodeProcessor.class);
    private final Map<String, Live> live = new HashMap<>();
    DecodeProcessor(String rawTopic, int batchRows, boolean rows, long idleTimeoutMs, int checkpointBuffers, long retentionMs,
                    MergeLimits liveLimits) {
        this.liveLimits = liveLimits;
        this.retentionMs = retentionMs;
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
        long every = Math.max(100, Math.min(idleTimeoutMs / 4, 10_000));
        context.schedule(Duration.ofMillis(every), PunctuationType.WALL_CLOCK_TIME, this::endIdleSessions);
    }

    @Override
    public void close() {
        forgetAll();
        if (inputs != null) inputs.close();
    }

    @Override
    public void process(Record<String, byte[]> record) {
        StageCounters.DECODE.recordsIn.increment();
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
            end(live(session, p, record.timestamp()), headers, "end-marker");
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
        } else {
            deadLetter(l.session, headers == null ? new RecordHeaders() : headers, new byte[0], "no-logfile-header",
                    "session " + l.session + " ended without a readable logfile header", l.timestamp);
        }
        long redoFrom = p.checkpointNext;
        p.checkpointNext = p.next;
        p.redoBytes = 0;
        p.endReason = reason;
        p.endedMs = context.currentSystemTimeMs();
        state.put(l.session, p.encode()); // first: whatever of the rest a cut-short end leaves, an ended session never reads
        earlyKeys(l.session).forEach(k -> StateStores.remove(state, k));
        for (long i = redoFrom; i < p.next; i++) StateStores.remove(state, redoKey(l.session, i));
        StateStores.remove(state, checkpointKey(l.session, 1));
        StateStores.remove(state, checkpointKey(l.session, 2));
        forget(l.session);
        StageCounters.DECODE.sessionsEnded.increment();
        // the session's last batches and its end record reach read_committed readers now, not up to a commit interval later
        context.commit();
    }

    /** Ends, as incomplete, every open session that has had no buffer for the idle timeout. */
    private void endIdleSessions(long now) {
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
            StateStores.remove(state, session);
            StageCounters.DECODE.sessionsForgotten.increment();
            LOG.info("session {} ended more than {} s ago: it left the store (a buffer of it now would start it again)", session,
                    retentionMs / 1000);
        }
        for (KeyValue<String, DecodeProgress> kv : idle) {
            end(live(kv.key, live.containsKey(kv.key) ? kv.value : stored(kv.key), now), null, "idle-timeout");
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
