package io.swapstream.decode.streams;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.etw.BufferDecoder;
import io.swapstream.schemas.etw.EtlFormatException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decodes raw buffers, one record each, per session with the offline {@link SessionDecoder}.
 * The session's buffers and a progress count live in state stores committed with the outputs;
 * after a restart the decoder is rebuilt by replaying the stored buffers and only what was not
 * emitted before is emitted, so the output is the same as without the restart.
 */
final class DecodeProcessor implements Processor<String, byte[], String, Object> {
    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, byte[]> buffers;
    private KeyValueStore<String, byte[]> progress;
    private final Map<String, Live> live = new HashMap<>();
    static final int MAX_REASONS = 10;

    /** A session being decoded in memory. */
    private final class Live {
        final String session;
        final BufferDecoder buffer = new BufferDecoder();
        SessionDecoder decoder;
        long buffers;
        long switches;
        long threads;
        long deadLetters;
        /** Why buffers were not decoded, the first {@value #MAX_REASONS}. */
        final List<String> lossReasons = new ArrayList<>();
        boolean sessionEmitted;
        long skipSwitches;
        long skipThreads;
        long skipDeadLetters;
        boolean replaying;
        long timestamp;

        Live(String session, String host, Integer maxWaitReason) {
            this.session = session;
            this.decoder = new SessionDecoder(host, maxWaitReason, s -> {
                switches++;
                if (skipSwitches > 0) skipSwitches--;
                else forward(session, AvroRecords.of(s));
            }, t -> {
                threads++;
                if (skipThreads > 0) skipThreads--;
                else forward(AvroRecords.threadKey(session, t.threadId()), AvroRecords.of(t));
            });
        }
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.buffers = context.getStateStore(DecodeTopology.BUFFERS_STORE);
        this.progress = context.getStateStore(DecodeTopology.PROGRESS_STORE);
    }

    @Override
    public void process(Record<String, byte[]> record) {
        String session = record.key();
        if (session == null || session.isEmpty()) {
            deadLetter(session, record.headers(), record.value(), "raw buffer without a session key", record.timestamp());
            return;
        }
        DecodeProgress p = DecodeProgress.decode(progress.get(session));
        if (p.done()) {
            deadLetter(session, record.headers(), record.value(), "session " + session + " is already complete: a re-ingested buffer",
                    record.timestamp());
            return;
        }
        Live l = live.get(session);
        if (l == null) l = rebuild(session, p, record.headers());
        l.timestamp = record.timestamp();
        if (record.headers().lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null) {
            finish(l, record.headers());
            return;
        }
        long index = parseLong(header(record.headers(), SwapstreamConfig.HEADER_BUFFER_INDEX, "-1"));
        if (index < 0) index = l.buffers; // no index: take arrival order
        if (index < l.buffers) return; // a re-run ingest resent a buffer this session already has
        byte[] bytes = record.value() == null ? new byte[0] : record.value();
        buffers.put(bufferKey(session, index), bytes);
        if (index == l.buffers) {
            apply(l, bytes, record.headers());
            // buffers that came early wait in the store until the gap before them fills
            byte[] next;
            while ((next = buffers.get(bufferKey(session, l.buffers))) != null) apply(l, next, record.headers());
        }
        save(l, false);
    }

    private Live rebuild(String session, DecodeProgress p, Headers headers) {
        Live l = new Live(session, header(headers, SwapstreamConfig.HEADER_HOST, LogfileHeader.hostOf(session)), maxWaitReason(headers));
        l.skipSwitches = p.switches();
        l.skipThreads = p.threads();
        l.skipDeadLetters = p.deadLetters();
        l.sessionEmitted = p.sessionEmitted();
        l.replaying = true;
        List<KeyValue<String, byte[]>> stored = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = buffers.range(session + "/", session + "/~")) {
            it.forEachRemaining(stored::add);
        }
        for (KeyValue<String, byte[]> kv : stored) {
            if (indexOf(kv.key) != l.buffers) break; // the rest came early and waits for a gap to fill
            apply(l, kv.value, new RecordHeaders());
        }
        l.replaying = false;
        live.put(session, l);
        return l;
    }

    private void apply(Live l, byte[] bytes, Headers headers) {
        long index = l.buffers++;
        String source = header(headers, SwapstreamConfig.HEADER_SOURCE_FILE, l.session) + " buffer " + index;
        long offset = parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_INDEX, "-1")) == index
                ? Math.max(0, parseLong(header(headers, SwapstreamConfig.HEADER_BUFFER_OFFSET, "0"))) : 0;
        try {
            l.buffer.load(source, offset, bytes, 0, bytes.length);
            SessionDecoder.check(l.buffer); // a malformed buffer changes nothing
            l.decoder.onBuffer(l.buffer, offset, source);
            if (!l.sessionEmitted && l.decoder.session() != null) {
                l.sessionEmitted = true;
                forward(l.session, AvroRecords.of(l.decoder.session()).setBuffers(l.buffers).build());
            }
        } catch (EtlFormatException e) {
            l.deadLetters++;
            lost(l, e.getMessage());
            if (l.skipDeadLetters > 0) l.skipDeadLetters--;
            else if (!l.replaying) deadLetter(l.session, headers, bytes, e.getMessage(), l.timestamp);
        }
    }

    private static void lost(Live l, String reason) {
        if (l.lossReasons.size() < MAX_REASONS) l.lossReasons.add(reason);
    }

    private void finish(Live l, Headers headers) {
        long announced = parseLong(header(headers, SwapstreamConfig.HEADER_END_OF_SESSION, "-1"));
        long lost = l.deadLetters;
        if (announced > l.buffers) {
            String reason = "buffer " + l.buffers + " never arrived, so buffers " + l.buffers
                    + " to " + (announced - 1) + " of session " + l.session + " were not decoded";
            deadLetter(l.session, headers, new byte[0], reason, l.timestamp);
            lost(l, reason);
            lost += announced - l.buffers;
        }
        long atIngest = Math.max(0, parseLong(header(headers, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, "0")));
        if (atIngest > 0) {
            lost += atIngest;
            lost(l, "ingest: " + header(headers, SwapstreamConfig.HEADER_INGEST_ERROR, "buffers went to the dead letters"));
        }
        l.decoder.finish();
        if (l.decoder.session() != null) {
            var c = l.decoder.counters();
            // a session that lost anything is never presented as complete
            forward(l.session, AvroRecords.of(l.decoder.session()).setComplete(lost == 0).setEndReason("end-marker")
                    .setBuffers(l.buffers).setSwitchCount(l.switches).setThreadRecords(l.threads).setDeadLetters(lost)
                    .setLossReasons(new ArrayList<>(l.lossReasons)).setInconsistencies(c.oldThreadNotLastSwitchedIn).build());
        } else {
            deadLetter(l.session, headers, new byte[0], "session " + l.session + " ended without a readable logfile header", l.timestamp);
        }
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = buffers.range(l.session + "/", l.session + "/~")) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(buffers::delete);
        save(l, true);
        live.remove(l.session);
    }

    private void save(Live l, boolean done) {
        progress.put(l.session, new DecodeProgress(l.buffers, l.switches, l.threads, l.deadLetters, l.sessionEmitted, done).encode());
    }

    private void forward(String key, Object value) {
        Live l = live.get(SessionPartitioner.session(key));
        long ts = l == null ? context.currentSystemTimeMs() : l.timestamp;
        context.forward(new Record<>(key, value, ts));
    }

    private void deadLetter(String key, Headers in, byte[] bytes, String reason, long ts) {
        RecordHeaders h = new RecordHeaders();
        for (Header x : in) h.add(x);
        h.add(SwapstreamConfig.HEADER_ERROR, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "decode".getBytes(StandardCharsets.UTF_8));
        context.forward(new Record<>(key, new DeadLetter(bytes, reason), ts, h));
    }

    private static long indexOf(String bufferKey) {
        return Long.parseLong(bufferKey.substring(bufferKey.lastIndexOf('/') + 1));
    }

    static String bufferKey(String session, long index) {
        return session + "/" + String.format("%012d", index);
    }


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
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
