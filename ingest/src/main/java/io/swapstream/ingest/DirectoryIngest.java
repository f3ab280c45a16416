package io.swapstream.ingest;

import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.state.StateFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code ingest --watch DIR}: follows every {@code .etl} file in a directory, new and growing, and
 * publishes each buffer once all its BufferSize bytes are there (a half-written buffer never goes
 * out). A file that has not grown for the quiet time is finished: its end marker goes out.
 *
 * <p>How far each session has been published is kept in Kafka, in the compacted
 * {@code etw.ingest-positions} topic, written in the same transaction as the buffers: after a restart
 * (kill -9 included) the ingester reads the committed positions and goes on from there, and buffers of
 * an aborted transaction were never visible to the decode stage (it reads committed records only).
 */
public final class DirectoryIngest implements AutoCloseable {
    /** The format of an {@code etw.ingest-positions} record's value. */
    static final StateFormat FORMAT = new StateFormat("ingest position", 4);

    /**
     * @param host          host of every file's session; null: each file's name without extension
     * @param quietMs       a file that has not grown for this long is finished
     * @param transactionalId stable for one watcher across restarts, so a restarted one fences the old
     */
    public record Settings(Path dir, String host, long quietMs, String prefix, String bootstrap, String transactionalId,
                           Integer maxWaitReason, Map<String, Object> overrides) {}

    /** How far a session has been published: the value of an {@code etw.ingest-positions} record. */
    public static final class Position {
        String path;
        long nextIndex;
        long offset;
        boolean ended;

        public String path() { return path; }
        public long nextIndex() { return nextIndex; }
        public long offset() { return offset; }
        public boolean ended() { return ended; }

        byte[] encode() {
            return FORMAT.write(o -> o.string(path).writeLong(nextIndex).writeLong(offset).writeBoolean(ended));
        }

        public static Position decode(byte[] b) {
            return FORMAT.read(b, in -> {
                Position p = new Position();
                p.path = in.string();
                p.nextIndex = in.readLong();
                p.offset = in.readLong();
                p.ended = in.readBoolean();
                return p;
            });
        }
    }

    /** A file being followed. */
    private static final class Followed {
        Path path;
        Object fileKey;
        String host;
        String session;
        final Position position = new Position();
        long size;
        long lastGrowthMs;
        /** Not an ETL file (yet): looked at again only when it grows. */
        String notEtl;
    }

    private final Settings settings;
    private final Consumer<String> log;
    private KafkaProducer<String, byte[]> producer;
    private final String rawTopic;
    private final String deadLetterTopic;
    private final String positionsTopic;
    /** Committed positions by session, read at start. */
    private final Map<String, Position> committed;
    private final Map<Path, Followed> files = new LinkedHashMap<>();
    private final Map<String, Followed> bySession = new HashMap<>();
    /** Sessions whose position changed in the open transaction. */
    private final java.util.Set<Followed> moved = new java.util.LinkedHashSet<>();
    private final byte[] header = new byte[BufferHeader.SIZE];
    /** Where a buffer is read before the bytes to send are copied out: one new array per buffer, sized as sent. */
    private byte[] read = new byte[64 * 1024];
    /** The last transaction failed: abort it before anything else. */
    private boolean aborting;

    public DirectoryIngest(Settings settings, Consumer<String> log) {
        this.settings = settings;
        this.log = log;
        this.rawTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.RAW_BUFFERS);
        this.deadLetterTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.DEAD_LETTERS);
        this.positionsTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.INGEST_POSITIONS);
        this.committed = readPositions();
        this.producer = newProducer();
    }

    private KafkaProducer<String, byte[]> newProducer() {
        Map<String, Object> c = new HashMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalId());
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        c.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, BufferPublisher.COMPRESSION);
        c.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "swapstream-ingest-watch");
        c.putAll(settings.overrides());
        KafkaProducer<String, byte[]> p = new KafkaProducer<>(c, new StringSerializer(), new ByteArraySerializer());
        try {
            p.initTransactions();
        } catch (RuntimeException e) {
            p.close(Duration.ZERO);
            throw e;
        }
        return p;
    }

    /** The committed positions: the latest record of every session, committed transactions only. */
    private Map<String, Position> readPositions() {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-ingest-positions");
        c.putAll(settings.overrides());
        Map<String, Position> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(positionsTopic);
            if (infos == null || infos.isEmpty()) return out;
            List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(positionsTopic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            while (parts.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value() == null) out.remove(r.key());
                    else out.put(r.key(), Position.decode(r.value()));
                }
            }
        }
        return out;
    }

    /** Sessions known, open and ended. */
    public int followed() { return files.size(); }

    /** Buffers published, and sessions ended, by this watcher. */
    public final java.util.concurrent.atomic.LongAdder buffersOut = new java.util.concurrent.atomic.LongAdder(), sessionsEnded = new java.util.concurrent.atomic.LongAdder();

    public long open() { return files.values().stream().filter(f -> f.session != null && !f.position.ended).count(); }

    /**
     * One look at the directory: publishes every complete buffer, ends quiet, deleted and
     * rewritten files, and commits it all in one transaction.
     */
    public void poll(long nowMs) throws IOException {
        if (aborting && !recover()) return;
        try {
            publish(nowMs);
        } catch (ProducerFencedException | org.apache.kafka.common.errors.InvalidProducerEpochException e) {
            // another watcher of this directory took over, or the coordinator bumped the epoch (a broker restart, a
            // transaction timed out; under transaction.version 2 a fenced producer's next send is refused for its old
            // epoch): a new producer takes over a few times (fencing the other, if any), then it is fatal
            if (!fencings.spend(nowMs)) {
                ProducerFencedException fenced = new ProducerFencedException("fenced " + MAX_FENCINGS + " times in 10 minutes, last: "
                        + e.getMessage() + " (another watcher of this directory?)");
                fenced.initCause(e);
                throw fenced;
            }
            log.accept("Kafka: " + e.getMessage() + "; a new producer takes over from the last committed positions");
            producer.close(Duration.ZERO);
            producer = null;
            startOver();
        } catch (OutOfOrderSequenceException | AuthorizationException | UnsupportedVersionException e) {
            throw e; // the producer cannot go on: fatal
        } catch (KafkaException e) {
            // abortable (a broker restarted mid-transaction, say): the transaction's buffers and positions
            // are dropped together, and every file is followed again from its last committed position
            log.accept("Kafka: " + e.getMessage() + "; the open transaction is aborted and its buffers go again");
            startOver();
        }
    }

    /** The open transaction's buffers and positions are dropped together; every file is followed again from its last committed position. */
    private void startOver() {
        aborting = true;
        files.clear();
        bySession.clear();
        moved.clear();
    }

    /** Fencings survived lately: a watcher fenced again and again has a twin, and stops. */
    public static final int MAX_FENCINGS = 3;
    private final io.swapstream.schemas.RecoveryBudget fencings = new io.swapstream.schemas.RecoveryBudget(MAX_FENCINGS, 10 * 60_000L);

    /**
     * After a failed transaction: aborts it, or when the producer cannot go on, replaces it (same
     * transactional id, so Kafka aborts what the old one left open), and reads the committed positions
     * again (a commit that timed out may have gone through). False while Kafka does not answer.
     */
    private boolean recover() {
        try {
            if (producer != null) {
                try {
                    producer.abortTransaction();
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    throw e;
                } catch (KafkaException e) {
                    producer.close(Duration.ZERO);
                    producer = null;
                }
            }
            if (producer == null) producer = newProducer();
            committed.clear();
            committed.putAll(readPositions());
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            log.accept("Kafka does not answer (" + e.getMessage() + "); trying again");
            return false;
        }
        aborting = false;
        return true;
    }

    private void publish(long nowMs) throws IOException {
        List<Path> present;
        try (Stream<Path> s = Files.list(settings.dir())) {
            present = s.filter(p -> p.getFileName().toString().toLowerCase().endsWith(".etl") && Files.isRegularFile(p)).sorted().toList();
        }
        boolean open = false;
        for (Path p : present) {
            try {
                open |= follow(p, nowMs, open);
            } catch (IOException e) {
                log.accept(p + ": cannot be read now (" + e.getMessage() + "); trying again");
            }
        }
        for (Followed f : new ArrayList<>(files.values())) {
            if (!Files.exists(f.path)) {
                files.remove(f.path);
                if (f.session != null && !f.position.ended) {
                    open |= begin(open);
                    end(f, "the file was deleted after " + f.position.nextIndex + " buffers, before it stopped growing");
                    log.accept(f.path + ": deleted after " + f.position.nextIndex + " buffers; session " + f.session
                            + " ends as incomplete");
                }
                if (f.session != null) bySession.remove(f.session);
            } else if (f.session != null && !f.position.ended && nowMs - f.lastGrowthMs >= settings.quietMs()) {
                open |= begin(open);
                String rest = f.size > f.position.offset
                        ? "the file stopped growing " + (f.size - f.position.offset) + " bytes into the buffer at offset "
                          + f.position.offset + ": truncated" : null;
                if (rest != null) deadLetter(f, rest);
                end(f, rest);
                log.accept(f.path + ": no growth for " + settings.quietMs() / 1000 + " s; session " + f.session + " ended after "
                        + f.position.nextIndex + " buffers" + (rest == null ? "" : " (" + rest + ")"));
            }
        }
        if (open) commit();
    }

    private boolean begin(boolean open) {
        if (!open) producer.beginTransaction();
        return true;
    }

    /** Publishes what is new in one file; true when a transaction is now open. */
    private boolean follow(Path p, long nowMs, boolean open) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(p, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return false;
        }
        Followed f = files.get(p);
        if (f == null) {
            f = renamedFrom(attrs.fileKey());
            if (f != null) {
                log.accept(f.path + ": renamed to " + p + "; following it there");
                files.remove(f.path);
                f.path = p;
                f.position.path = p.toString();
                moved.add(f);
            } else {
                f = new Followed();
                f.path = p;
                f.fileKey = attrs.fileKey();
                f.host = settings.host() != null ? settings.host() : hostOf(p);
                f.lastGrowthMs = nowMs;
            }
            files.put(p, f);
        }
        long size = attrs.size();
        if (size != f.size) {
            if (size < f.size && f.session != null && !f.position.ended) {
                open = begin(open);
                end(f, "the file was rewritten from the start (circular logging?) after " + f.position.nextIndex + " buffers");
                log.accept(p + ": shrank from " + f.size + " to " + size + " bytes; session " + f.session + " ends as incomplete");
            }
            f.size = size;
            f.lastGrowthMs = nowMs;
            f.notEtl = null;
        }
        if (f.notEtl != null || f.position.ended) return open;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            if (f.session == null && !identify(f, ch)) return open;
            if (f.position.ended) return open;
            while (true) {
                long left = size - f.position.offset;
                if (left < BufferHeader.SIZE) break;
                // the header lands where the buffer will, so the rest is one more read, not the whole buffer again
                readFully(ch, ByteBuffer.wrap(read, 0, BufferHeader.SIZE), f.position.offset);
                BufferHeader bh = BufferHeader.read(read, f.position.offset);
                int bufferSize = bh.bufferSize();
                if (bufferSize == 0) break; // preallocated space the logger has not written yet
                if (bufferSize < BufferHeader.SIZE || bufferSize > SwapstreamConfig.MAX_MESSAGE_BYTES) {
                    // not a buffer: wait for the quiet time, then the rest goes to the dead letters
                    break;
                }
                if (left < bufferSize) break; // still being written
                if (read.length < bufferSize) read = Arrays.copyOf(read, bufferSize);
                readFully(ch, ByteBuffer.wrap(read, BufferHeader.SIZE, bufferSize - BufferHeader.SIZE), f.position.offset);
                byte[] bytes = BufferFiller.published(read, bufferSize, bh);
                open = begin(open);
                RecordHeaders h = BufferPublisher.headers(f.host, p, f.position.nextIndex, f.position.offset, settings.maxWaitReason());
                producer.send(new ProducerRecord<>(rawTopic, null, f.session, bytes, h));
                buffersOut.increment();
                f.position.nextIndex++;
                f.position.offset += bufferSize;
                moved.add(f);
            }
        } catch (NoSuchFileException e) {
            return open;
        }
        return open;
    }

    /** Reads the first buffer's logfile header; false while it is not all there or not ETL. */
    private boolean identify(Followed f, FileChannel ch) throws IOException {
        if (f.size < BufferHeader.SIZE) return false;
        readFully(ch, ByteBuffer.wrap(header), 0);
        int first = BufferHeader.read(header, 0).bufferSize();
        if (first == 0 || (first >= BufferHeader.SIZE && first <= SwapstreamConfig.MAX_MESSAGE_BYTES && f.size < first)) return false;
        String session;
        try {
            byte[] bytes = new byte[(int) Math.min(f.size, Math.max(first, BufferHeader.SIZE))];
            readFully(ch, ByteBuffer.wrap(bytes), 0);
            EtlReader r = EtlReader.of(f.path.toString(), ByteBuffer.wrap(bytes)).framesOnly();
            if (!r.next()) return false;
            LogfileHeader h = LogfileHeader.find(r.decoder());
            if (h == null) throw new EtlFormatException(f.path.toString(), BufferHeader.SIZE, "no logfile header event in the first buffer");
            session = h.sessionId(f.host);
        } catch (EtlFormatException e) {
            f.notEtl = e.getMessage();
            log.accept(f.path + ": not followed: " + e.getMessage());
            return false;
        }
        Followed other = bySession.get(session);
        if (other != null && other != f) {
            f.notEtl = "the same session as " + other.path;
            log.accept(f.path + ": not followed: it holds session " + session + ", already followed in " + other.path);
            return false;
        }
        f.session = session;
        bySession.put(session, f);
        Position c = committed.get(session);
        if (c != null) {
            f.position.nextIndex = c.nextIndex;
            f.position.offset = c.offset;
            f.position.ended = c.ended;
            if (c.ended) log.accept(f.path + ": session " + session + " was published and ended before; not published again");
            else log.accept(f.path + ": resuming session " + session + " at buffer " + c.nextIndex + " (byte " + c.offset + ")");
            if (!c.ended && f.size < c.offset) {
                f.position.ended = true;
                log.accept(f.path + ": shorter than its committed position " + c.offset + "; not followed");
            }
        } else {
            log.accept(f.path + ": following session " + session);
        }
        f.position.path = f.path.toString();
        return true;
    }

    private Followed renamedFrom(Object fileKey) {
        if (fileKey == null) return null;
        for (Followed f : files.values()) {
            if (Objects.equals(f.fileKey, fileKey) && !Files.exists(f.path)) return f;
        }
        return null;
    }

    private void deadLetter(Followed f, String reason) throws IOException {
        byte[] rest;
        try (FileChannel ch = FileChannel.open(f.path, StandardOpenOption.READ)) {
            long n = Math.max(0, Math.min(f.size - f.position.offset, SwapstreamConfig.MAX_MESSAGE_BYTES - 64 * 1024));
            rest = new byte[(int) n];
            readFully(ch, ByteBuffer.wrap(rest), f.position.offset);
        }
        RecordHeaders h = BufferPublisher.headers(f.host, f.path, f.position.nextIndex, f.position.offset, settings.maxWaitReason());
        h.add(SwapstreamConfig.HEADER_ERROR, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "ingest".getBytes(StandardCharsets.UTF_8));
        producer.send(new ProducerRecord<>(deadLetterTopic, null, f.session, rest, h));
    }

    /** The session's end marker; {@code error} says why it is incomplete, or null. */
    private void end(Followed f, String error) {
        RecordHeaders h = BufferPublisher.headers(f.host, f.path, f.position.nextIndex, -1, settings.maxWaitReason());
        h.add(SwapstreamConfig.HEADER_END_OF_SESSION, Long.toString(f.position.nextIndex).getBytes(StandardCharsets.UTF_8));
        if (error != null) {
            h.add(SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, "1".getBytes(StandardCharsets.UTF_8));
            h.add(SwapstreamConfig.HEADER_INGEST_ERROR, error.getBytes(StandardCharsets.UTF_8));
        }
        producer.send(new ProducerRecord<>(rawTopic, null, f.session, new byte[0], h));
        f.position.ended = true;
        moved.add(f);
        sessionsEnded.increment();
    }

    /** The positions of what the transaction sent go with it, so they commit or abort together. */
    private void commit() {
        Map<String, Position> positions = new HashMap<>();
        for (Followed f : moved) {
            if (f.session == null) continue;
            byte[] b = f.position.encode();
            producer.send(new ProducerRecord<>(positionsTopic, f.session, b));
            positions.put(f.session, Position.decode(b));
        }
        producer.commitTransaction();
        // known committed only once they are: an aborted transaction resumes from the ones before
        committed.putAll(positions);
        moved.clear();
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) throw new IOException("file ends early");
        }
    }

    static String hostOf(Path p) {
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    @Override
    public void close() {
        if (producer != null) producer.close(Duration.ofSeconds(10));
    }
}
