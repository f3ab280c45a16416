package io.swapstream.ingest;

import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.BufferHeader;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads one session's buffers back from {@code etw.raw-buffers}, committed records only, each restored to
 * its bytes in the file ({@link BufferFiller#restore}), in the order the ingester read them from the file:
 * the session's file comes back byte for byte, one buffer in memory at a time.
 *
 * <p>Where to start: a session's records all lie in one partition ({@link SessionPartitioner}), and its first
 * buffer was published no earlier than the logger started, which its id says (the logfile header's StartTime,
 * the host's clock). So the partition is read from {@code offsetsForTimes(start - CLOCK_MARGIN)} (record
 * timestamps are the ingester's publish times): one ListOffsets request, nothing written at ingest. The
 * margin covers an ingester's clock behind the trace host's; when the first record found is not the
 * session's first buffer, the partition is read again from its start, so a skewed clock costs time, never a
 * wrong file. Every record of the partition from there to the session's end is fetched (other sessions'
 * are dropped): that is the cost of keeping no index.
 */
public final class RawSessionReader implements AutoCloseable {
    /**
     * How far an ingester's clock may be behind the trace host's: a file ingested where it was written shares
     * the clock, one copied elsewhere is published long after its logger started.
     */
    public static final Duration CLOCK_MARGIN = Duration.ofHours(1);
    /** FILETIME (100 ns ticks since 1601) of the Unix epoch. */
    static final long UNIX_EPOCH_FILETIME = 116_444_736_000_000_000L;

    /** One buffer as in the file: {@code bytes} restored to its BufferSize, valid until the next. */
    public record Buffer(long index, long fileOffset, byte[] bytes, BufferHeader header, long publishedMs) {}

    public interface Sink {
        void buffer(Buffer b) throws IOException;
    }

    /**
     * What was read: {@code ended} when the session's end marker was found (else a live session, as far as
     * published), {@code incomplete} the ingester's reason when it ended without the file's rest.
     */
    public record Outcome(long buffers, long bytes, boolean ended, String incomplete, int partition, long fromOffset,
                          long recordsScanned) {}

    /** The topic does not hold what was asked for: the message says what it holds. */
    public static final class Unavailable extends RuntimeException {
        public Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    private final KafkaConsumer<String, byte[]> consumer;
    private final String topic;

    public RawSessionReader(String bootstrap, String prefix, Map<String, Object> overrides) {
        Map<String, Object> c = new HashMap<>(overrides);
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        // one partition is read: a fetch holds about a MiB (a larger record still comes whole), so memory is a few buffers
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1 << 20);
        c.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 64);
        c.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-export");
        this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        this.topic = SwapstreamConfig.topic(prefix, SwapstreamConfig.RAW_BUFFERS);
    }

    /** The trace's start as Unix milliseconds, from a session id's last field (StartTime, a FILETIME). */
    public static long startMillis(String session) {
        int colon = session.lastIndexOf(':');
        if (colon <= 0 || session.indexOf(':') == colon) {
            throw new IllegalArgumentException("'" + session + "' is not a session id (host:logger:start time)");
        }
        try {
            return Math.floorDiv(Long.parseLong(session.substring(colon + 1)) - UNIX_EPOCH_FILETIME, 10_000L);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + session + "' is not a session id: its start time '" + session.substring(colon + 1)
                    + "' is not a number");
        }
    }

    public String topic() {
        return topic;
    }

    /** The partition that holds {@code session}'s records. */
    public TopicPartition partitionOf(String session) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic);
        if (infos == null || infos.isEmpty()) throw new Unavailable("topic " + topic + " does not exist");
        return new TopicPartition(topic, SessionPartitioner.partition(session, infos.size()));
    }

    /**
     * Hands every buffer of {@code session} to {@code sink}, in file order, up to its end marker or, for a live
     * session, to the last committed record now. Throws {@link Unavailable} when the topic holds none of it, or not its start.
     *
     * @param fromBeginning read the partition from its start (an ingester whose clock was far behind the trace's)
     */
    public Outcome read(String session, boolean fromBeginning, Sink sink) throws IOException {
        long startMs = startMillis(session);
        TopicPartition tp = partitionOf(session);
        consumer.assign(List.of(tp));
        long begin = consumer.beginningOffsets(List.of(tp)).get(tp);
        long end = consumer.endOffsets(List.of(tp)).get(tp);
        long from = begin;
        if (!fromBeginning) {
            OffsetAndTimestamp at = consumer.offsetsForTimes(Map.of(tp, Math.max(0, startMs - CLOCK_MARGIN.toMillis()))).get(tp);
            from = at == null ? end : Math.max(begin, at.offset());
        }
        Scan scan = new Scan(session, sink);
        scan.run(tp, from, end, from > begin);
        if (scan.firstIndex > 0 && from > begin) {
            // the session began before the bound (a clock far behind): its start can only be earlier in the partition
            scan = new Scan(session, sink);
            from = begin;
            scan.run(tp, from, end, false);
        }
        if (scan.firstIndex < 0) {
            throw new Unavailable("session " + session + ": no record of it in " + tp + " (offsets " + from + " to " + end
                    + (from > begin ? ", published since " + Instant.ofEpochMilli(startMs - CLOCK_MARGIN.toMillis())
                    + "; --from-beginning reads from offset " + begin : "") + ")");
        }
        if (scan.firstIndex > 0) {
            throw new Unavailable("session " + session + ": " + topic + " no longer holds it whole: it holds buffers " + scan.firstIndex
                    + " to " + scan.lastSeen + " (offsets " + scan.firstOffset + " to " + scan.lastOffset + ", published from "
                    + Instant.ofEpochMilli(scan.firstTimestamp) + "); the buffers before were deleted (retention)");
        }
        return new Outcome(scan.next, scan.bytes, scan.ended, scan.incomplete, tp.partition(), from, scan.scanned);
    }

    /** Thrown by a sink to stop a read once it has what it wanted. */
    private static final class Enough extends RuntimeException {
        Enough() {
            super(null, null, false, false);
        }
    }

    /**
     * Checks that the topic holds {@code session} from its first buffer, reading up to that record only: throws
     * {@link Unavailable} as {@link #read} would.
     */
    public void probe(String session) throws IOException {
        try {
            read(session, false, b -> {
                throw new Enough();
            });
        } catch (Enough e) {
            // its first buffer is there
        }
    }

    /**
     * The sessions of {@code host} with a record published since {@code fromMs} less {@link #CLOCK_MARGIN} that began
     * by {@code toMs}: every session with an event in that range, since a buffer is published after its events. Reads
     * every partition from there to its end.
     */
    public java.util.SortedSet<String> sessionsOf(String host, long fromMs, long toMs) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic);
        if (infos == null || infos.isEmpty()) throw new Unavailable("topic " + topic + " does not exist");
        List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(parts);
        Map<TopicPartition, Long> end = consumer.endOffsets(parts);
        Map<TopicPartition, Long> times = new HashMap<>();
        for (TopicPartition tp : parts) times.put(tp, Math.max(0, fromMs - CLOCK_MARGIN.toMillis()));
        Map<TopicPartition, OffsetAndTimestamp> at = consumer.offsetsForTimes(times);
        for (TopicPartition tp : parts) consumer.seek(tp, at.get(tp) == null ? end.get(tp) : at.get(tp).offset());
        java.util.SortedSet<String> found = new java.util.TreeSet<>();
        String prefix = host + ":";
        while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) continue;
                String key = r.key();
                if (key == null || !key.startsWith(prefix) || found.contains(key)) continue;
                try {
                    if (startMillis(key) <= toMs) found.add(key);
                } catch (IllegalArgumentException e) {
                    // not a session id: not the ingester's
                }
            }
        }
        return found;
    }

    /** One pass over a partition; writes nothing unless the session's first buffer comes first. */
    private final class Scan {
        final String session;
        final Sink sink;
        long firstIndex = -1;
        long firstOffset = -1;
        long firstTimestamp;
        long lastSeen = -1;
        long lastOffset = -1;
        String stream;
        long next;
        long bytes;
        boolean ended;
        String incomplete;
        long scanned;

        Scan(String session, Sink sink) {
            this.session = session;
            this.sink = sink;
        }

        /** @param stopAtGap stop at the first record of the session that is not its first buffer */
        void run(TopicPartition tp, long from, long end, boolean stopAtGap) throws IOException {
            consumer.seek(tp, from);
            while (!ended && consumer.position(tp) < end) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500)).records(tp)) {
                    if (r.offset() >= end) return;
                    scanned++;
                    if (!session.equals(r.key()) || r.value() == null) continue;
                    long index = longHeader(r, SwapstreamConfig.HEADER_BUFFER_INDEX);
                    String s = header(r, SwapstreamConfig.HEADER_STREAM);
                    if (firstIndex < 0) {
                        firstIndex = index;
                        firstOffset = r.offset();
                        firstTimestamp = r.timestamp();
                        // a session belongs to the recording that began it (docs/architecture.md): its stream is kept
                        stream = s;
                    }
                    if (stream != null && !stream.equals(s)) continue;
                    lastSeen = Math.max(lastSeen, index);
                    lastOffset = r.offset();
                    String endCount = header(r, SwapstreamConfig.HEADER_END_OF_SESSION);
                    if (firstIndex > 0) {
                        // its start is gone, or earlier: what is held is only counted, for the message
                        if (stopAtGap || endCount != null) return;
                        continue;
                    }
                    if (endCount != null) {
                        // a re-run ingester publishes the same buffers again: only an end that follows every buffer written ends it
                        if (Long.parseLong(endCount) <= next) {
                            ended = true;
                            incomplete = header(r, SwapstreamConfig.HEADER_INGEST_ERROR);
                            return;
                        }
                        continue;
                    }
                    if (index < next) continue; // published twice (an ingester run again): the same bytes
                    if (index > next) {
                        throw new Unavailable("session " + session + ": buffer " + next + " is missing from " + tp + " (buffer " + index
                                + " follows at offset " + r.offset() + ")");
                    }
                    byte[] value = r.value();
                    if (value.length < BufferHeader.SIZE) {
                        throw new Unavailable("session " + session + ": buffer " + index + " at offset " + r.offset() + " holds "
                                + value.length + " bytes, less than a buffer header");
                    }
                    BufferHeader h = BufferHeader.read(value, bytes);
                    byte[] restored = BufferFiller.restore(value, h.bufferSize());
                    sink.buffer(new Buffer(index, bytes, restored, h, r.timestamp()));
                    next++;
                    bytes += restored.length;
                }
            }
        }
    }

    static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    static long longHeader(ConsumerRecord<?, ?> r, String name) {
        String v = header(r, name);
        if (v == null) return -1;
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public void close() {
        consumer.close();
    }
}
