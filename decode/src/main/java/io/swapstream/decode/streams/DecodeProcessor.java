package io.swapstream.decode.streams;

import io.swapstream.batch.AvroRecords;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.stage.InputRecordReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes each session's raw buffers in order (holding apart those that come early) and decodes them
 * with the offline decoder ({@link LiveSession}). Every {@link SwapstreamConfig#DECODE_CHECKPOINT_BUFFERS}
 * buffers (or {@link DecodeSettings#CHECKPOINT_BYTES} of them) it stores the decoder's checkpoint; the buffers
 * since are noted in the redo log ({@link io.swapstream.stage.RedoLog}), so a restarted or moved task restores
 * the checkpoint and decodes them again, sending nothing. A checkpoint per buffer would cost its encoding, megabytes when
 * the merge waits for a quiet processor, for every 64 KiB buffer. Exactly-once v2 commits the stores
 * with the outputs, every {@code commit.interval.ms}: a commit asked at each session's first batch or end was a
 * transaction per host when a fleet starts or rotates its files together. A session ends with its end marker, or as incomplete after the idle timeout.
 * A buffer that fails its check is a dead letter, and its session goes on. Whatever else a record makes
 * the decoder throw is a dead letter too: its session's decoder may be half way through a change, so the
 * session ends there, marked incomplete with the reason. No input stops the stage: a task that stopped on a
 * record would meet it again at every restart, and every session of its partition would wait behind it.
 */
final class DecodeProcessor implements Processor<String, byte[], String, Object> {
    private static final Logger LOG = LoggerFactory.getLogger(DecodeProcessor.class);

    private final DecodeSettings settings;
    private ProcessorContext<String, Object> context;
    private DecodeStores stores;
    private DecodeOutputs outputs;
    private DecodeMetrics metrics;
    private InputRecordReader inputs;
    /** Sessions decoded in this task's memory: a cache of what the stores hold. */
    private final Map<String, LiveSession> live = new HashMap<>();
    /** Sessions with state in this task, not ended: counted by each idle scan, kept up between. */
    private long openSessions;
    /** Items the merges of the sessions in memory hold: kept as a sum, not added up again per buffer. */
    private long queuedTotal;

    DecodeProcessor(DecodeSettings settings) {
        this.settings = settings;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        queuedTotal = 0;
        this.context = context;
        this.inputs = InputRecordReader.of(context, "decode-redo");
        this.stores = new DecodeStores(context, inputs, settings.topics().raw().name());
        this.outputs = new DecodeOutputs(context);
        this.metrics = new DecodeMetrics(context);
        live.clear();
        long every = Math.max(100, Math.min(settings.idleTimeoutMs() / 4, 10_000));
        context.schedule(Duration.ofMillis(every), PunctuationType.WALL_CLOCK_TIME, this::endIdleSessions);
    }

    @Override
    public void close() {
        live.clear();
        if (metrics != null) metrics.close();
        if (inputs != null) inputs.close();
    }

    @Override
    public void process(Record<String, byte[]> record) {
        metrics.recordsIn.record();
        try {
            take(record);
        } catch (KafkaException e) {
            throw e; // the broker's, the stores' or the task's own: not the record's doing
        } catch (RuntimeException e) {
            // a last guard: the steps that decode catch what they throw; the session is read again from the stores
            String session = record.key();
            if (session != null) dropFromMemory(session);
            LOG.error("session {}: a record could not be taken, sent to the dead letters", session, e);
            deadLetter(session, record.headers(), record.value(), "unprocessable",
                    "the decode stage could not take this record: " + describe(e), record.timestamp());
        }
    }

    private void take(Record<String, byte[]> record) {
        String session = record.key();
        Headers headers = record.headers();
        String valueless = RawBufferHeaders.valueless(headers);
        if (valueless != null) {
            deadLetter(session, headers, record.value(), "bad-header", "header '" + valueless + "' has no value", record.timestamp());
            return;
        }
        if (session == null || session.isEmpty() || session.indexOf(DecodeStores.SEPARATOR) >= 0 || session.indexOf('/') >= 0) {
            deadLetter(session, headers, record.value(), "no-session-key", session == null || session.isEmpty()
                    ? "raw buffer without a session key" : "raw buffer whose session key holds a NUL character or '/'", record.timestamp());
            return;
        }
        LiveSession known = live.get(session);
        DecodeProgress p = known != null ? known.progress : stores.progress(session);
        String stream = RawBufferHeaders.text(headers, SwapstreamConfig.HEADER_STREAM, null);
        if (!p.ended() && !ofItsStream(p, stream)) {
            // another recording under a live session's id ends, extends or overwrites nothing of it
            deadLetter(session, headers, record.value(), "other-stream", "session " + session + " belongs to the recording that began it"
                    + " (stream " + p.stream + "), and this record is of another (stream " + (stream == null ? "not given" : stream)
                    + "): another start, file or host under the same session id", record.timestamp());
            return;
        }
        long index = RawBufferHeaders.number(headers, SwapstreamConfig.HEADER_BUFFER_INDEX);
        if (p.ended()) {
            // an ingester run again on a finished file sends what the session has
            if (RawBufferHeaders.endOfSession(headers) || index >= 0 && index < p.next) return;
            deadLetter(session, headers, record.value(), "after-session-end", "session " + session + " has ended (" + p.endReason
                    + "): a buffer that came after its end", record.timestamp());
            return;
        }
        if (p.host == null) { // its first record
            p.host = RawBufferHeaders.text(headers, SwapstreamConfig.HEADER_HOST, LogfileHeader.hostOf(session));
            p.maxWaitReason = RawBufferHeaders.maxWaitReason(headers);
            p.latenessTicks = RawBufferHeaders.number(headers, SwapstreamConfig.HEADER_LATENESS_TICKS);
            p.flushTimerMs = RawBufferHeaders.number(headers, SwapstreamConfig.HEADER_FLUSH_TIMER_MS);
            metrics.sessionsOpen.record(++openSessions);
        }
        p.lastBufferMs = context.currentSystemTimeMs();
        if (RawBufferHeaders.endOfSession(headers)) {
            end(live(session, p, record.timestamp()), headers, "end-marker");
            return;
        }
        if (index < 0) index = p.next; // no index: take arrival order
        byte[] bytes = record.value() == null ? new byte[0] : record.value();
        if (index != p.next) {
            // before: a re-run ingest sent a buffer the session has; after: held apart until its turn
            if (index > p.next && stores.holdEarly(session, index, bytes) && known != null) known.early++;
            if (index < p.next || !stores.hasEarly(session, p.next)) {
                stores.put(session, p);
                return;
            }
        }
        LiveSession l = live(session, p, record.timestamp());
        if (index == p.next) apply(l, bytes, headers, InputRecordReader.reference(context));
        // the buffers held apart that now follow, in order
        byte[] next;
        while (!p.ended() && l.early > 0 && (next = stores.takeEarly(session, p.next)) != null) {
            l.early--;
            apply(l, next, new RecordHeaders(), InputRecordReader.copy(next));
        }
        stores.put(session, p);
    }

    /**
     * Whether a record of {@code stream} may go on with the session: the first record's stream claims it; a
     * session begun without one (an ingester of release 0.1.0) goes to the first stream that comes.
     */
    private static boolean ofItsStream(DecodeProgress p, String stream) {
        if (p.host == null || p.stream == null) {
            if (stream != null) p.stream = stream;
            return true;
        }
        return p.stream.equals(stream);
    }

    /** The session in memory, or restored from the stores, with progress {@code p}. */
    private LiveSession live(String session, DecodeProgress p, long timestamp) {
        LiveSession l = live.get(session);
        if (l == null) {
            l = LiveSession.restore(session, p, stores, settings, outputs, metrics);
            live.put(session, l);
            queuedTotal += l.queued;
        }
        l.timestamp = timestamp;
        return l;
    }

    /** Decodes the session's next buffer, {@code bytes}; {@code redoEntry} is what the redo store keeps of it. */
    private void apply(LiveSession l, byte[] bytes, Headers headers, byte[] redoEntry) {
        DecodeProgress p = l.progress;
        long index = p.next++;
        stores.redo().note(l.session, index, redoEntry);
        p.redoBytes += bytes.length;
        decode(l, index, bytes, headers);
        if (p.ended()) return; // the buffer failed the decoder, which ended the session
        if (settings.checkpointEvery().reached(p.next - p.checkpointNext, p.redoBytes)) {
            long redoFrom = p.checkpointNext;
            p.checkpointNext = p.next;
            p.checkpoints++;
            p.redoBytes = 0;
            p.checkpointParts = stores.putCheckpoint(l.session, l.checkpoint(), p.checkpointParts, redoFrom, p.checkpointNext);
            recordSessionGauges();
        }
    }

    private void decode(LiveSession l, long index, byte[] bytes, Headers headers) {
        DecodeProgress p = l.progress;
        metrics.buffersIn.record();
        String source = RawBufferHeaders.text(headers, SwapstreamConfig.HEADER_SOURCE_FILE, l.session) + " buffer " + index;
        long queuedBefore = l.queued;
        long offset = RawBufferHeaders.fileOffset(headers, index);
        try {
            l.load(bytes, offset, source);
        } catch (KafkaException e) {
            throw e;
        } catch (RuntimeException e) {
            // nothing of the session changed: it goes on without this buffer
            p.deadLetters++;
            p.lost(describe(e));
            deadLetter(l.session, headers, bytes, "malformed-buffer", describe(e), l.timestamp);
            return;
        }
        try {
            l.take(offset, source);
        } catch (KafkaException e) {
            throw e;
        } catch (EtlFormatException e) {
            p.deadLetters++;
            p.lost(e.getMessage());
            deadLetter(l.session, headers, bytes, "malformed-buffer", e.getMessage(), l.timestamp);
            return;
        } catch (RuntimeException e) {
            // the decoder may have taken part of the buffer: what comes after cannot be decoded exactly
            LOG.error("session {}: {} failed the decoder: the session ends here", l.session, source, e);
            String why = source + " failed the decoder (" + describe(e) + "): the session was ended there";
            p.deadLetters++;
            p.lost(why);
            deadLetter(l.session, headers, bytes, "decode-failure", why, l.timestamp);
            queuedTotal += l.queued - queuedBefore;
            end(l, null, "decode-failure");
            return;
        }
        queuedTotal += l.queued - queuedBefore;
        metrics.mergeQueued.record(queuedTotal);
        if (!p.sessionEmitted && l.decoder.session() != null) {
            p.sessionEmitted = true;
            outputs.session(l.session, AvroRecords.of(l.decoder.session()).setBuffers(p.next).build(), l.timestamp);
        }
    }

    /** Ends the session: the decoder's last switches, the session's end record, and its state but its progress freed. */
    private void end(LiveSession l, Headers headers, String reason) {
        DecodeProgress p = l.progress;
        long lost = p.deadLetters;
        IngestEnd ingest = IngestEnd.of(headers);
        long announced = ingest.announced();
        if (announced > p.next) {
            String why = "buffer " + p.next + " never arrived, so buffers " + p.next + " to " + (announced - 1)
                    + " of session " + l.session + " were not decoded";
            deadLetter(l.session, headers, new byte[0], "missing-buffers", why, l.timestamp);
            p.lost(why);
            lost += announced - p.next;
        }
        if (ingest.deadLetters() > 0) {
            lost += ingest.deadLetters();
            metrics.deadLettersAtIngest(ingest.deadLetters());
        }
        if (ingest.deadLetters() > 0 || ingest.error() != null) {
            p.lost("ingest: " + (ingest.error() == null ? "buffers went to the dead letters" : ingest.error()));
        }
        boolean cutAtIngest = ingest.cutShort();
        if (reason.equals("idle-timeout")) {
            p.lost("no buffer for " + settings.idleTimeoutMs() / 1000 + " s: the session was ended as incomplete");
        }
        if (lost > 0 || cutAtIngest || !reason.equals("end-marker") || l.decoder.counters().switchesOutOfOrder > 0) {
            // cut short: past the earliest processor's last event, another's buffers may be missing, so what the merge
            // still holds goes out marked with that time, and the aggregate marks the windows past it
            // (docs/architecture.md "Incomplete sessions"); what left before, left once every processor had passed it
            long knownUntil = l.decoder.knownUntilNanos();
            l.incompleteFrom = l.incompleteFrom == null ? knownUntil : Math.min(l.incompleteFrom, knownUntil);
        }
        try {
            l.decoder.finish();
        } catch (KafkaException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.error("session {}: its decoder failed to finish", l.session, e);
            p.lost("the decoder failed to finish (" + describe(e) + "): switches it held were not emitted");
            lost++;
        }
        metrics.buffersLost.record(lost);
        if (l.decoder.session() != null) {
            metrics.eventsLost.record(Math.max(0, l.decoder.session().eventsLost()));
            var c = l.decoder.counters();
            long premature = l.decoder.prematureReleases();
            if (premature > 0) {
                p.lost(premature + " switches left the merge before every processor's buffers had passed them (its memory cap or"
                        + " --max-lateness): the windows after that are marked incomplete");
            }
            if (c.switchesOutOfOrder > 0) {
                p.lost(c.switchesOutOfOrder + " switches came after later ones had been emitted (the merge's maximum lateness or"
                        + " memory cap let those out first): they have no derived times");
            }
            // a session that lost anything, was cut short or has switches out of order is never presented as complete
            TraceSession record = AvroRecords.of(l.decoder.session())
                    .setComplete(lost == 0 && !cutAtIngest && premature == 0 && c.switchesOutOfOrder == 0 && reason.equals("end-marker"))
                    .setSwitchesOutOfOrder(c.switchesOutOfOrder).setMaxLatenessNanos(l.decoder.maxLatenessNanos())
                    .setEndReason(reason).setBuffers(p.next).setSwitchCount(p.switches).setThreadRecords(p.threads)
                    .setDeadLetters(lost).setLossReasons(new ArrayList<>(p.lossReasons))
                    .setInconsistencies(c.oldThreadNotLastSwitchedIn).build();
            outputs.session(l.session, record, l.timestamp);
        } else {
            deadLetter(l.session, headers == null ? new RecordHeaders() : headers, new byte[0], "no-logfile-header",
                    "session " + l.session + " ended without a readable logfile header", l.timestamp);
        }
        stores.dropParts(l.session, p.checkpointParts, p.checkpointNext, p.next);
        p.checkpointParts = 0;
        p.checkpointNext = p.next;
        p.redoBytes = 0;
        p.endReason = reason;
        p.endedMs = context.currentSystemTimeMs();
        stores.put(l.session, p);
        live.remove(l.session);
        queuedTotal -= l.queued;
        metrics.mergeQueued.record(queuedTotal);
        recordSessionGauges();
        metrics.sessionsOpen.record(openSessions = Math.max(0, openSessions - 1));
        metrics.sessionsEnded.record();
    }

    /** Ends, as incomplete, every open session that has had no buffer for the idle timeout; forgets ended ones past retention. */
    private void endIdleSessions(long now) {
        recordSessionGauges();
        List<KeyValue<String, DecodeProgress>> idle = new ArrayList<>();
        List<KeyValue<String, DecodeProgress>> endNoted = new ArrayList<>();
        List<String> expired = new ArrayList<>();
        long open = 0;
        try (KeyValueIterator<String, byte[]> it = stores.allProgress()) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                LiveSession l = live.get(kv.key);
                DecodeProgress p = l != null ? l.progress : DecodeProgress.decode(kv.value);
                if (p.ended()) {
                    // a service takes sessions for ever: an ended one leaves once its retention has passed
                    if (p.endedMs <= 0) {
                        p.endedMs = now;
                        endNoted.add(KeyValue.pair(kv.key, p));
                    } else if (now - p.endedMs >= settings.retentionMs()) {
                        expired.add(kv.key);
                    }
                    continue;
                }
                open++;
                if (now - p.lastBufferMs >= settings.idleTimeoutMs()) idle.add(KeyValue.pair(kv.key, p));
            }
        }
        metrics.sessionsOpen.record(openSessions = open);
        endNoted.forEach(kv -> stores.put(kv.key, kv.value));
        for (String session : expired) {
            stores.forget(session);
            metrics.sessionsForgotten.record();
            LOG.info("session {} ended more than {} s ago: it left the store (a buffer of it now would start it again)", session,
                    settings.retentionMs() / 1000);
        }
        for (KeyValue<String, DecodeProgress> kv : idle) end(live(kv.key, kv.value, now), null, "idle-timeout");
    }

    /**
     * The largest last checkpoint of the sessions in memory, and the most a merge holds back: looked at when a
     * checkpoint is taken, a session leaves, and at the clock's punctuation, not per buffer.
     */
    private void recordSessionGauges() {
        long checkpoint = 0;
        long heldBack = 0;
        for (LiveSession l : live.values()) {
            checkpoint = Math.max(checkpoint, l.checkpointBytes);
            heldBack = Math.max(heldBack, l.decoder.heldBackNanos());
        }
        metrics.checkpointBytes.record(checkpoint);
        metrics.eventLag.record(heldBack);
    }

    /** Forgets the session's decoder in memory: its next record restores it from the stores. */
    private void dropFromMemory(String session) {
        LiveSession l = live.remove(session);
        if (l != null) queuedTotal -= l.queued;
    }

    /** One line for a dead letter's reason: the format's own message, else what was thrown and where it says. */
    static String describe(RuntimeException e) {
        if (e instanceof EtlFormatException) return e.getMessage();
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage().replace('\n', ' '));
    }

    private void deadLetter(String key, Headers in, byte[] bytes, String kind, String reason, long timestamp) {
        metrics.deadLetter(kind);
        outputs.deadLetter(key, in, bytes, reason, timestamp);
    }
}
