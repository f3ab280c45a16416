package io.swapstream.ingest;

import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.FileBytes;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes each buffer of an .etl file, bytes unchanged, as one record keyed by session id, then
 * a record that ends the session. The file is finished, so it is walked first for how late its
 * buffers come ({@link BufferLateness}), and the first record says so: the decode stage's merge then
 * waits for exactly that. The idempotent producer keeps retries from duplicating; the
 * buffer-index header lets the decode stage drop buffers of a re-run ingest it already has.
 */
public final class BufferPublisher implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;
    private final String rawTopic;
    private final String deadLetterTopic;
    /** The first send the broker refused: every send is checked before publish returns. */
    private final AtomicReference<Exception> failed = new AtomicReference<>();

    /** What one file became: {@code bytes} as sent, without the buffers' filler ({@link BufferFiller}). */
    /**
     * @param error       what broke the file's framing off: the rest went to the dead letters
     * @param undecodable the first thing of the file that cannot be decoded though it frames (a corrupt compressed buffer,
     *                    a malformed event): published as it is, the decode stage sends its buffer to the dead letters
     */
    public record Published(String session, long buffers, long bytes, String error, String undecodable, String cutShort) {}

    /**
     * The ingesters' compression, cheap on CPU: event data shrinks on the wire and on the brokers' disks
     * (docs/performance.md, "Compression"), and so does the 0xFF filler of a buffer sent whole (see {@link BufferFiller}).
     */
    public static final String COMPRESSION = "lz4";

    public BufferPublisher(String bootstrapServers, String prefix, Map<String, Object> overrides) {
        Map<String, Object> c = new HashMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        // buffers must arrive in order: the decode stage numbers them as they come
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        c.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, COMPRESSION);
        c.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        c.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 16L << 20);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "swapstream-ingest");
        c.putAll(overrides);
        this.producer = new KafkaProducer<>(c, new StringSerializer(), new ByteArraySerializer());
        this.rawTopic = SwapstreamConfig.topic(prefix, SwapstreamConfig.RAW_BUFFERS);
        this.deadLetterTopic = SwapstreamConfig.topic(prefix, SwapstreamConfig.DEAD_LETTERS);
    }

    /**
     * Publishes {@code file}, a finished file. A file whose header cannot be read is refused before anything is sent
     * ({@link EtlFormatException}); a file that breaks off later keeps what was sent, its unframeable
     * rest goes to the dead-letter topic and the session is ended, and the error is returned.
     *
     * @param progress told the bytes consumed so far, may be null
     */
    public Published publish(Path file, String host, Integer maxWaitReason, LongConsumer progress)
            throws IOException, InterruptedException, ExecutionException {
        Published p = send(file, host, maxWaitReason, progress);
        flush(file.toString());
        return p;
    }

    /**
     * As {@link #publish} without waiting for Kafka's acknowledgement: {@link #flush} then waits for every file sent
     * since the last, so many small files cost one round trip, not one each.
     */
    public Published send(Path file, String host, Integer maxWaitReason, LongConsumer progress) throws IOException {
        long lateness;
        String undecodable = null;
        try {
            lateness = lateness(file);
        } catch (EtlFormatException e) {
            // what breaks framing off is found and reported as the file is published
            lateness = -1;
            undecodable = e.getMessage();
        }
        try (EtlReader r = EtlReader.open(file).framesOnly()) {
            LogfileHeader header = headerOf(r);
            String session = header.sessionId(host);
            String stream = header.stream();
            long index = 0;
            long bytes = 0;
            String error = null;
            while (true) {
                byte[] value = BufferFiller.published(r.rawBytes(), r.rawLength(), r.header());
                RecordHeaders h = headers(host, stream, file, index, r.bufferOffset(), maxWaitReason);
                if (index == 0 && lateness >= 0) {
                    h.add(SwapstreamConfig.HEADER_LATENESS_TICKS, Long.toString(lateness).getBytes(StandardCharsets.UTF_8));
                }
                producer.send(new ProducerRecord<>(rawTopic, null, session, value, h), this::sent);
                index++;
                bytes += value.length;
                if (progress != null) progress.accept(r.position());
                try {
                    if (!r.next()) break;
                } catch (EtlFormatException e) {
                    error = e.getMessage();
                    sendDeadLetter(session, host, stream, file, index, r.position(), maxWaitReason, rest(file, r.position()), error);
                    break;
                }
            }
            String cut = error == null ? r.cutShort() : null;
            String cutShort = cut == null ? null : new EtlFormatException(r.source(), r.length(), cut).getMessage();
            producer.send(new ProducerRecord<>(rawTopic, null, session, new byte[0],
                    endMarker(host, stream, file, index, maxWaitReason, error != null ? 1 : 0, error != null ? error : cutShort)),
                    this::sent);
            return new Published(session, index, bytes, error, error == null ? undecodable : null, cutShort);
        }
    }

    /** Waits until Kafka has acknowledged everything sent; fails naming {@code what} when it refused a record. */
    public void flush(String what) throws ExecutionException {
        producer.flush();
        Exception e = failed.getAndSet(null);
        if (e != null) throw new ExecutionException("a buffer of " + what + " was not accepted by Kafka: " + e.getMessage(), e);
    }

    /**
     * The largest lateness of the file's buffers, in its clock's ticks. A file that cannot be walked whole
     * throws: it is published with no lateness, and the decode stage merges the session as a live one.
     */
    static long lateness(Path file) throws IOException {
        try (EtlReader r = EtlReader.open(file)) {
            return BufferLateness.of(r).max();
        }
    }

    /** The logfile header of the file {@code r} has just opened (its first buffer is read here). */
    private static LogfileHeader headerOf(EtlReader r) throws IOException {
        if (!r.next()) throw new EtlFormatException(r.source(), 0, "no buffers");
        LogfileHeader header = LogfileHeader.find(r.decoder());
        if (header == null) {
            throw new EtlFormatException(r.source(), io.swapstream.etw.BufferHeader.SIZE, "no logfile header event in the first buffer");
        }
        return header;
    }

    /** The session id a file will be published as, read from its logfile header. */
    public static String sessionOf(Path file, String host) throws IOException {
        try (EtlReader r = EtlReader.open(file).framesOnly()) {
            return headerOf(r).sessionId(host);
        }
    }

    /** The stream its buffers are published with ({@link LogfileHeader#stream()}), read from its logfile header. */
    public static String streamOf(Path file) throws IOException {
        try (EtlReader r = EtlReader.open(file).framesOnly()) {
            return headerOf(r).stream();
        }
    }

    /** The bytes of {@code file} from {@code from} on, at most what a record may hold. */
    private static byte[] rest(Path file, long from) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file)) {
            long n = Math.max(0, Math.min(ch.size() - from, SwapstreamConfig.MAX_MESSAGE_BYTES - 64 * 1024));
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate((int) n);
            FileBytes.readFully(ch, b, from);
            return b.array();
        }
    }

    /**
     * A session's end marker after {@code buffers} buffers; {@code error} (or null) says why it is incomplete, and the decode
     * stage marks it so with that reason, also when nothing went to the dead letters (a file cut at a buffer's end).
     */
    static RecordHeaders endMarker(String host, String stream, Path file, long buffers, Integer maxWaitReason, long deadLetters,
                                   String error) {
        RecordHeaders end = headers(host, stream, file, buffers, -1, maxWaitReason);
        end.add(SwapstreamConfig.HEADER_END_OF_SESSION, Long.toString(buffers).getBytes(StandardCharsets.UTF_8));
        if (deadLetters > 0) end.add(SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, Long.toString(deadLetters).getBytes(StandardCharsets.UTF_8));
        if (error != null) end.add(SwapstreamConfig.HEADER_INGEST_ERROR, error.getBytes(StandardCharsets.UTF_8));
        return end;
    }

    private void sendDeadLetter(String session, String host, String stream, Path file, long index, long offset, Integer maxWaitReason,
                                byte[] value, String error) {
        RecordHeaders h = headers(host, stream, file, index, offset, maxWaitReason);
        h.add(SwapstreamConfig.HEADER_ERROR, error.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "ingest".getBytes(StandardCharsets.UTF_8));
        producer.send(new ProducerRecord<>(deadLetterTopic, null, session, value, h), this::sent);
    }

    private void sent(org.apache.kafka.clients.producer.RecordMetadata m, Exception e) {
        if (e != null) failed.compareAndSet(null, e);
    }

    /**
     * The headers of a raw buffer record (docs/architecture.md "Topics and records"); {@code offset} negative for none,
     * {@code stream} the recording's {@link LogfileHeader#stream()}.
     */
    public static RecordHeaders headers(String host, String stream, Path file, long index, long offset, Integer maxWaitReason) {
        RecordHeaders h = new RecordHeaders();
        h.add(SwapstreamConfig.HEADER_HOST, host.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STREAM, stream.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_SOURCE_FILE, file.toString().getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_BUFFER_INDEX, Long.toString(index).getBytes(StandardCharsets.UTF_8));
        if (offset >= 0) h.add(SwapstreamConfig.HEADER_BUFFER_OFFSET, Long.toString(offset).getBytes(StandardCharsets.UTF_8));
        if (maxWaitReason != null) {
            h.add(SwapstreamConfig.HEADER_MAX_WAIT_REASON, ("0x" + Integer.toHexString(maxWaitReason)).getBytes(StandardCharsets.UTF_8));
        }
        return h;
    }

    @Override
    public void close() {
        producer.close();
    }
}
