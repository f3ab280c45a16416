package io.swapstream.ingest;

import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.FileBytes;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.header.internals.RecordHeaders;

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
    /**
     * @param host            host of every file's session; null: each file's name without extension
     * @param quietMs         a file that has not grown for this long is finished
     * @param transactionalId stable for one watcher across restarts, so a restarted one fences the old
     * @param afterPublish    what to do with a file once its session's end is committed
     * @param flushTimerMs    the loggers' flush timer, declared for the decode stage's merge; null: none declared
     */
    public record Settings(Path dir, String host, long quietMs, String prefix, String bootstrap, String transactionalId,
                           Integer maxWaitReason, Map<String, Object> overrides, AfterPublish afterPublish, Long flushTimerMs) {}

    private final Settings settings;
    private final Consumer<String> log;
    private final WatchTransactions tx;
    private final String rawTopic;
    private final String deadLetterTopic;
    private final Map<Path, WatchedFile> files = new LinkedHashMap<>();
    private final Map<String, WatchedFile> bySession = new HashMap<>();
    /** Sessions whose position changed in the open transaction. */
    private final java.util.Set<WatchedFile> moved = new java.util.LinkedHashSet<>();
    private final byte[] header = new byte[BufferHeader.SIZE];
    /** Where a buffer is read before the bytes to send are copied out: one new array per buffer, sized as sent. */
    private byte[] read = new byte[64 * 1024];
    /** Files whose end marker is in the open transaction. */
    private final java.util.Set<WatchedFile> ending = new java.util.LinkedHashSet<>();
    /** Files whose session has ended and is committed, still to delete or move. */
    private final java.util.Set<WatchedFile> finished = new java.util.LinkedHashSet<>();
    /** Entries of the folder it will not follow, each said once. */
    private final java.util.Set<Path> refused = new java.util.HashSet<>();

    public DirectoryIngest(Settings settings, Consumer<String> log) {
        this(settings, log, WatchTransactions.kafka(settings));
    }

    /** With {@code clients} for Kafka's: a unit test's fake. */
    DirectoryIngest(Settings settings, Consumer<String> log, WatchTransactions.Clients clients) {
        this.settings = settings;
        this.log = log;
        this.rawTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.RAW_BUFFERS);
        this.deadLetterTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.DEAD_LETTERS);
        this.tx = new WatchTransactions(settings, log, clients);
    }

    /** A file's host as this watcher names it: its one host, or the file's name without extension. */
    public String hostFor(Path p) {
        return settings.host() != null ? settings.host() : WatchedFile.hostOf(p);
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
        if (!tx.ready()) return;
        try {
            publish(nowMs);
        } catch (ProducerFencedException | org.apache.kafka.common.errors.InvalidProducerEpochException e) {
            tx.fenced(e, nowMs);
            startOver();
        } catch (OutOfOrderSequenceException | AuthorizationException | AuthenticationException | UnsupportedVersionException e) {
            throw e; // the producer cannot go on (or its credential was revoked): fatal
        } catch (KafkaException e) {
            tx.checkCredential();
            // abortable (a broker restarted mid-transaction, say): the transaction's buffers and positions
            // are dropped together, and every file is followed again from its last committed position
            log.accept("Kafka: " + e.getMessage() + "; the open transaction is aborted and its buffers go again");
            startOver();
        }
    }

    /** The open transaction's buffers and positions are dropped together; every file is followed again from its last committed position. */
    private void startOver() {
        tx.failed();
        files.clear();
        bySession.clear();
        moved.clear();
        ending.clear();
        finished.clear();
    }

    private void publish(long nowMs) throws IOException {
        List<Path> present = new ArrayList<>();
        try (Stream<Path> s = Files.list(settings.dir())) {
            for (Path p : s.sorted().toList()) {
                if (p.getFileName().toString().toLowerCase().endsWith(".etl") && Files.isRegularFile(p)) present.add(p);
                else if (p.getFileName().toString().startsWith(WatchedFolder.STATUS_FILE)) continue; // the collection script's, read for /metrics
                else refuse(p, Files.isDirectory(p) ? "a folder: only the .etl files directly in " + settings.dir() + " are followed"
                        : "not an .etl file");
            }
        }
        refused.removeIf(p -> !Files.exists(p));
        for (Path p : present) {
            try {
                follow(p, nowMs);
            } catch (IOException e) {
                log.accept(p + ": cannot be read now (" + e.getMessage() + "); trying again");
            }
        }
        for (WatchedFile f : new ArrayList<>(files.values())) {
            if (!Files.exists(f.path)) {
                files.remove(f.path);
                if (f.session != null && !f.position.ended) {
                    end(f, "the file was deleted after " + f.position.nextIndex + " buffers, before it stopped growing", 0);
                    log.accept(f.path + ": deleted after " + f.position.nextIndex + " buffers; session " + f.session
                            + " ends as incomplete");
                }
                if (f.session != null) bySession.remove(f.session);
            } else if (f.session != null && !f.position.ended && f.supersededBy != null && f.size == f.position.offset) {
                String cut = FirstBuffer.cutShort(f.path, f.position.nextIndex);
                end(f, cut, 0);
                log.accept(f.path + ": its logger started " + f.supersededBy.getFileName() + "; session " + f.session + " ended after "
                        + f.position.nextIndex + " buffers" + (cut == null ? "" : " as incomplete: " + cut));
            } else if (f.session != null && !f.position.ended && nowMs - f.lastGrowthMs >= settings.quietMs()) {
                String rest = f.size > f.position.offset
                        ? "the file stopped growing " + (f.size - f.position.offset) + " bytes into the buffer at offset "
                          + f.position.offset + ": truncated" : null;
                if (rest != null) deadLetter(f, rest);
                String cut = rest == null ? FirstBuffer.cutShort(f.path, f.position.nextIndex) : null;
                end(f, rest != null ? rest : cut, rest != null ? 1 : 0);
                log.accept(f.path + ": no growth for " + settings.quietMs() / 1000 + " s; session " + f.session + " ended after "
                        + f.position.nextIndex + " buffers" + (rest != null ? " (" + rest + ")" : cut != null ? " as incomplete: " + cut : ""));
            }
        }
        if (tx.isOpen()) commit();
        disposeFinished();
    }

    /** Says once that {@code p} is not followed, and why. */
    private void refuse(Path p, String why) {
        if (refused.add(p)) log.accept(p + ": not followed: " + why);
    }

    /** Deletes or moves the files whose end is committed; one the logger still holds (Windows refuses) goes at a later look. */
    private void disposeFinished() {
        if (settings.afterPublish().action() == AfterPublish.Action.KEEP) {
            finished.clear();
            return;
        }
        for (var it = finished.iterator(); it.hasNext(); ) {
            WatchedFile f = it.next();
            try {
                String done = settings.afterPublish().apply(f.path);
                it.remove();
                files.remove(f.path);
                bySession.remove(f.session);
                if (done != null) log.accept(f.path + ": session " + f.session + " published and ended: " + done);
            } catch (IOException e) {
                if (!f.disposeFailed) log.accept(f.path + ": cannot be " + settings.afterPublish().action().name().toLowerCase()
                        + "d now (" + e.getMessage() + "); trying again");
                f.disposeFailed = true;
            }
        }
    }

    /** Publishes what is new in one file, in the open transaction. */
    private void follow(Path p, long nowMs) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(p, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return;
        }
        WatchedFile f = files.get(p);
        if (f == null) {
            f = renamedFrom(attrs.fileKey());
            if (f != null) {
                log.accept(f.path + ": renamed to " + p + "; following it there");
                files.remove(f.path);
                f.path = p;
                f.position.path = p.toString();
                moved.add(f);
            } else {
                f = new WatchedFile();
                f.path = p;
                f.fileKey = attrs.fileKey();
                f.host = hostFor(p);
                f.lastGrowthMs = nowMs;
                String problem = io.swapstream.etw.LogfileHeader.hostProblem(f.host);
                if (problem != null) {
                    f.notEtl = problem;
                    log.accept(p + ": not followed: its " + problem);
                }
            }
            files.put(p, f);
        }
        long size = attrs.size();
        if (size != f.size) {
            if (size < f.size && f.session != null && !f.position.ended) {
                end(f, "the file was rewritten from the start (circular logging?) after " + f.position.nextIndex + " buffers", 0);
                log.accept(p + ": shrank from " + f.size + " to " + size + " bytes; session " + f.session + " ends as incomplete");
            }
            f.size = size;
            f.lastGrowthMs = nowMs;
            // looked at again now it grew; but its host, from its name, stays what it was
            f.notEtl = LogfileHeader.hostProblem(f.host);
        }
        if (f.notEtl != null || f.position.ended) return;
        if (size == 0) {
            if (!f.saidEmpty) log.accept(p + ": empty; followed once it grows");
            f.saidEmpty = true;
            return;
        }
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            if (f.session == null && !identify(f, ch)) return;
            if (f.position.ended) return;
            while (true) {
                long left = size - f.position.offset;
                if (left < BufferHeader.SIZE) break;
                // the header lands where the buffer will, so the rest is one more read, not the whole buffer again
                FileBytes.readFully(ch, ByteBuffer.wrap(read, 0, BufferHeader.SIZE), f.position.offset);
                BufferHeader bh = BufferHeader.read(read, f.position.offset);
                int bufferSize = bh.bufferSize();
                if (bufferSize == 0) break; // preallocated space the logger has not written yet
                if (bufferSize < BufferHeader.SIZE || bufferSize > SwapstreamConfig.MAX_MESSAGE_BYTES) {
                    // not a buffer: wait for the quiet time, then the rest goes to the dead letters
                    break;
                }
                if (left < bufferSize) break; // still being written
                if (read.length < bufferSize) read = Arrays.copyOf(read, bufferSize);
                FileBytes.readFully(ch, ByteBuffer.wrap(read, BufferHeader.SIZE, bufferSize - BufferHeader.SIZE), f.position.offset);
                byte[] bytes = BufferFiller.published(read, bufferSize, bh);
                RecordHeaders h = BufferPublisher.headers(f.host, f.stream, p, f.position.nextIndex, f.position.offset, settings.maxWaitReason());
                if (f.position.nextIndex == 0 && settings.flushTimerMs() != null) {
                    h.add(SwapstreamConfig.HEADER_FLUSH_TIMER_MS, Long.toString(settings.flushTimerMs()).getBytes(StandardCharsets.UTF_8));
                }
                tx.send(new ProducerRecord<>(rawTopic, null, f.session, bytes, h));
                buffersOut.increment();
                f.position.nextIndex++;
                f.position.offset += bufferSize;
                moved.add(f);
            }
        } catch (NoSuchFileException e) {
            return;
        }
        return;
    }

    /** Reads the first buffer's logfile header; false while it is not all there or not ETL. */
    private boolean identify(WatchedFile f, FileChannel ch) throws IOException {
        FirstBuffer first = FirstBuffer.read(f.path, f.host, ch, f.size, header);
        if (first.notEtl() != null) {
            f.notEtl = first.notEtl();
            log.accept(f.path + ": not followed: " + f.notEtl);
        }
        if (first.session() == null) return false;
        String session = first.session();
        f.logger = first.logger();
        f.startTime = first.startTime();
        f.stream = first.stream();
        WatchedFile other = bySession.get(session);
        if (other != null && other != f) {
            f.notEtl = "the same session as " + other.path;
            log.accept(f.path + ": not followed: it holds session " + session + ", already followed in " + other.path);
            return false;
        }
        f.session = session;
        bySession.put(session, f);
        IngestPosition c = tx.committed(session);
        if (c != null) {
            f.position.nextIndex = c.nextIndex;
            f.position.offset = c.offset;
            f.position.ended = c.ended;
            if (c.ended) {
                log.accept(f.path + ": session " + session + " was published and ended before; not published again");
                finished.add(f);
            }
            else log.accept(f.path + ": resuming session " + session + " at buffer " + c.nextIndex + " (byte " + c.offset + ")");
            if (!c.ended && f.size < c.offset) {
                f.position.ended = true;
                log.accept(f.path + ": shorter than its committed position " + c.offset + "; not followed");
            }
        } else {
            log.accept(f.path + ": following session " + session);
        }
        f.position.path = f.path.toString();
        supersede(f);
        return true;
    }

    /**
     * A logger that starts a new file has stopped writing its older ones (a stopped session flushes and
     * closes its file first): an older file of the same host and logger whose buffers are all published
     * ends now, without waiting for the quiet time.
     */
    private void supersede(WatchedFile newer) {
        for (WatchedFile f : files.values()) {
            if (f == newer || f.session == null || f.position.ended || !newer.host.equals(f.host) || !newer.logger.equals(f.logger)
                    || f.startTime >= newer.startTime) {
                continue;
            }
            f.supersededBy = newer.path;
        }
    }

    private WatchedFile renamedFrom(Object fileKey) {
        if (fileKey == null) return null;
        for (WatchedFile f : files.values()) {
            if (Objects.equals(f.fileKey, fileKey) && !Files.exists(f.path)) return f;
        }
        return null;
    }

    private void deadLetter(WatchedFile f, String reason) throws IOException {
        byte[] rest;
        try (FileChannel ch = FileChannel.open(f.path, StandardOpenOption.READ)) {
            long n = Math.max(0, Math.min(f.size - f.position.offset, SwapstreamConfig.MAX_MESSAGE_BYTES - 64 * 1024));
            rest = new byte[(int) n];
            FileBytes.readFully(ch, ByteBuffer.wrap(rest), f.position.offset);
        }
        RecordHeaders h = BufferPublisher.headers(f.host, f.stream, f.path, f.position.nextIndex, f.position.offset, settings.maxWaitReason());
        h.add(SwapstreamConfig.HEADER_ERROR, reason.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_STAGE, "ingest".getBytes(StandardCharsets.UTF_8));
        tx.send(new ProducerRecord<>(deadLetterTopic, null, f.session, rest, h));
    }

    /**
     * The session's end marker; {@code error} says why it is incomplete, or null; {@code deadLetters} went there before it
     * (the decode stage counts them as the ingester's dead letters: a file deleted or rewritten sent none).
     */
    private void end(WatchedFile f, String error, long deadLetters) {
        RecordHeaders h = BufferPublisher.endMarker(f.host, f.stream, f.path, f.position.nextIndex, settings.maxWaitReason(),
                error == null ? 0 : deadLetters, error);
        tx.send(new ProducerRecord<>(rawTopic, null, f.session, new byte[0], h));
        f.position.ended = true;
        moved.add(f);
        sessionsEnded.increment();
        ending.add(f);
    }

    /** The positions of what the transaction sent go with it, so they commit or abort together. */
    private void commit() {
        Map<String, IngestPosition> positions = new LinkedHashMap<>();
        for (WatchedFile f : moved) if (f.session != null) positions.put(f.session, f.position);
        tx.commit(positions);
        moved.clear();
        // only now is a file's end committed: a file is deleted or moved after that, never before
        for (WatchedFile f : ending) if (Files.exists(f.path)) finished.add(f);
        ending.clear();
    }

    @Override
    public void close() {
        tx.close();
    }
}
