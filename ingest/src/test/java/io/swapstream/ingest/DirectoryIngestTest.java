package io.swapstream.ingest;

import static io.swapstream.ingest.FakeKafka.header;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.swapstream.etw.BufferFiller;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watched folder without a broker: {@link DirectoryIngest#poll} is one look at the folder, driven here with made-up
 * clock values, against {@link FakeKafka}'s MockProducers. What a look publishes, in which order and transaction; how a
 * file that stops growing, is cut at a buffer's end, deleted, rewritten, superseded by its logger's next file, renamed,
 * copied or not a trace at all is handled; and where a watcher goes on after an aborted transaction, a fencing or a
 * restart.
 */
class DirectoryIngestTest {
    private static final int B = 4096; // the traces' BufferSize
    private static final long QUIET = 30_000;
    private static final long START = 134_000_000_000_000_000L;
    private static final String RAW = "t." + SwapstreamConfig.RAW_BUFFERS;
    private static final String DEAD = "t." + SwapstreamConfig.DEAD_LETTERS;
    private static final String POSITIONS = "t." + SwapstreamConfig.INGEST_POSITIONS;

    @TempDir Path root;
    private Path watched;
    private Path work;
    private final FakeKafka kafka = new FakeKafka();
    private final List<String> log = new ArrayList<>();

    @BeforeEach
    void folders() throws Exception {
        watched = Files.createDirectories(root.resolve("watched"));
        work = Files.createDirectories(root.resolve("work"));
    }

    /** A whole trace (9 buffers of 4 KiB, its logfile header finished: EndTime and BuffersWritten), as its bytes. */
    private byte[] trace(String logger, long startTime) throws Exception {
        Path p = work.resolve(logger.replace(' ', '_') + "-" + startTime + ".etl");
        if (!Files.exists(p)) {
            GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withSwitches(200).withBufferSize(B)
                    .withLoggerName(logger).withStartTime(startTime);
            TraceGenerator.generate(p, o, 37);
        }
        return Files.readAllBytes(p);
    }

    private byte[] trace() throws Exception {
        return trace("NT Kernel Logger", START);
    }

    /** Writes the first {@code n} bytes of {@code bytes} as {@code name} in the watched folder, as a logger that got that far. */
    private Path write(String name, byte[] bytes, int n) throws Exception {
        return Files.write(watched.resolve(name), Arrays.copyOf(bytes, n));
    }

    private DirectoryIngest watcher(String host, AfterPublish after, Long flushTimerMs) {
        return new DirectoryIngest(new DirectoryIngest.Settings(watched, host, QUIET, "t.", "unused:9092", "swapstream-ingest-t.web01:1", null,
                Map.of(), after, flushTimerMs), log::add, kafka);
    }

    private DirectoryIngest watcher() {
        return watcher("web01", AfterPublish.KEEP, null);
    }

    private List<ProducerRecord<String, byte[]>> raw() {
        return kafka.committed(RAW);
    }

    private static List<Long> indexes(List<ProducerRecord<String, byte[]>> records) {
        return records.stream().filter(r -> header(r, SwapstreamConfig.HEADER_END_OF_SESSION) == null)
                .map(r -> Long.parseLong(header(r, SwapstreamConfig.HEADER_BUFFER_INDEX))).toList();
    }

    private List<ProducerRecord<String, byte[]>> endMarkers() {
        return raw().stream().filter(r -> header(r, SwapstreamConfig.HEADER_END_OF_SESSION) != null).toList();
    }

    private IngestPosition position(String session) {
        return kafka.readCommitted(POSITIONS).get(session);
    }

    private static String session(String host, String logger, long startTime) {
        return host + ":" + logger + ":" + startTime;
    }

    private long said(String part) {
        return log.stream().filter(l -> l.contains(part)).count();
    }

    @Test
    void eachLookPublishesTheWholeBuffersInOrderInOneTransactionWithTheirPosition() throws Exception {
        byte[] t = trace();
        String s = session("web01", "NT Kernel Logger", START);
        Path h = write("h.etl", t, 2 * B + B / 2); // the third buffer half written
        try (DirectoryIngest w = watcher("web01", AfterPublish.KEEP, 1_000L)) {
            w.poll(0);
            assertEquals(1, kafka.commits());
            assertEquals(List.of(0L, 1L), indexes(raw()), "a half-written buffer never goes out");
            for (ProducerRecord<String, byte[]> r : raw()) {
                int i = Integer.parseInt(header(r, SwapstreamConfig.HEADER_BUFFER_INDEX));
                assertEquals(s, r.key());
                assertArrayEquals(Arrays.copyOfRange(t, i * B, (i + 1) * B), BufferFiller.restore(r.value(), B),
                        "buffer " + i + " as in the file (its filler left off)");
                assertEquals(Long.toString((long) i * B), header(r, SwapstreamConfig.HEADER_BUFFER_OFFSET));
                assertEquals("web01", header(r, SwapstreamConfig.HEADER_HOST));
                assertEquals(h.toString(), header(r, SwapstreamConfig.HEADER_SOURCE_FILE));
                assertEquals(i == 0 ? "1000" : null, header(r, SwapstreamConfig.HEADER_FLUSH_TIMER_MS), "the flush timer on the first buffer only");
            }
            assertEquals(List.of(RAW, RAW, POSITIONS), kafka.committed().stream().map(ProducerRecord::topic).toList(),
                    "the position in the transaction of the buffers it counts, after them");
            assertEquals(2, position(s).nextIndex());
            assertEquals(2L * B, position(s).offset());
            assertFalse(position(s).ended());
            assertEquals(1, w.open());

            w.poll(1_000);
            assertEquals(1, kafka.commits(), "nothing new: no transaction");

            write("h.etl", t, 5 * B);
            w.poll(2_000);
            assertEquals(2, kafka.commits());
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), indexes(raw()));
            assertEquals(5, position(s).nextIndex());
            assertEquals(5L * B, position(s).offset());
            assertEquals(5, w.buffersOut.sum());
            assertTrue(endMarkers().isEmpty(), "still growing: not ended");
        }
    }

    @Test
    void aFileThatStopsGrowingEndsAfterTheQuietTimeAndItsPartBufferIsADeadLetter() throws Exception {
        byte[] t = trace();
        String s = session("web01", "NT Kernel Logger", START);
        write("h.etl", t, 3 * B + 100);
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
            w.poll(QUIET - 1);
            assertEquals(1, kafka.commits(), "not quiet long enough");
            assertTrue(endMarkers().isEmpty());

            w.poll(QUIET);
            List<ProducerRecord<String, byte[]>> dead = kafka.committed(DEAD);
            assertEquals(1, dead.size());
            assertEquals(s, dead.get(0).key());
            assertArrayEquals(Arrays.copyOfRange(t, 3 * B, 3 * B + 100), dead.get(0).value(), "the bytes past the last whole buffer");
            assertEquals("ingest", header(dead.get(0), SwapstreamConfig.HEADER_STAGE));
            assertEquals("3", header(dead.get(0), SwapstreamConfig.HEADER_BUFFER_INDEX));
            assertEquals(Long.toString(3L * B), header(dead.get(0), SwapstreamConfig.HEADER_BUFFER_OFFSET));
            assertTrue(header(dead.get(0), SwapstreamConfig.HEADER_ERROR).endsWith("truncated"), header(dead.get(0), SwapstreamConfig.HEADER_ERROR));

            ProducerRecord<String, byte[]> end = endMarkers().get(0);
            assertEquals(0, end.value().length);
            assertEquals("3", header(end, SwapstreamConfig.HEADER_END_OF_SESSION));
            assertEquals("1", header(end, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS));
            assertEquals("the file stopped growing 100 bytes into the buffer at offset " + 3 * B + ": truncated",
                    header(end, SwapstreamConfig.HEADER_INGEST_ERROR));
            assertNull(header(end, SwapstreamConfig.HEADER_BUFFER_OFFSET));
            assertTrue(position(s).ended());
            assertEquals(0, w.open());
            assertEquals(1, w.sessionsEnded.sum());

            // a session ended is done: what its file gets later is not published
            write("h.etl", t, t.length);
            w.poll(QUIET + 1_000);
            w.poll(3 * QUIET);
            assertEquals(2, kafka.commits());
            assertEquals(1, endMarkers().size());
        }
    }

    @Test
    void aFileCutAtABuffersEndEndsIncompleteWithItsHeadersReasonAndAWholeOneComplete() throws Exception {
        byte[] t = trace();
        write("whole.etl", t, t.length);
        write("cut.etl", t, 3 * B);
        try (DirectoryIngest w = watcher(null, AfterPublish.KEEP, null)) { // each file's name its host
            w.poll(0);
            w.poll(QUIET);
        }
        String whole = session("whole", "NT Kernel Logger", START);
        String cut = session("cut", "NT Kernel Logger", START);
        assertEquals(Set.of(whole, cut), raw().stream().map(ProducerRecord::key).collect(Collectors.toSet()));
        ProducerRecord<String, byte[]> wholeEnd = endMarkers().stream().filter(r -> r.key().equals(whole)).findFirst().orElseThrow();
        assertEquals(Integer.toString(t.length / B), header(wholeEnd, SwapstreamConfig.HEADER_END_OF_SESSION));
        assertNull(header(wholeEnd, SwapstreamConfig.HEADER_INGEST_ERROR), "its logger stopped and every buffer is there");
        assertEquals("whole", header(wholeEnd, SwapstreamConfig.HEADER_HOST));

        ProducerRecord<String, byte[]> cutEnd = endMarkers().stream().filter(r -> r.key().equals(cut)).findFirst().orElseThrow();
        assertEquals("3", header(cutEnd, SwapstreamConfig.HEADER_END_OF_SESSION));
        assertTrue(header(cutEnd, SwapstreamConfig.HEADER_INGEST_ERROR).contains("says " + t.length / B + " buffers were written; the file holds 3: cut short"),
                header(cutEnd, SwapstreamConfig.HEADER_INGEST_ERROR));
        assertNull(header(cutEnd, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS), "nothing went to the dead letters");
        assertTrue(kafka.committed(DEAD).isEmpty());
    }

    @Test
    void aDeletedFileAndARewrittenFileEndIncompleteWithoutClaimingADeadLetter() throws Exception {
        byte[] t = trace();
        Path a = write("a.etl", t, 3 * B);
        write("b.etl", t, 3 * B);
        try (DirectoryIngest w = watcher(null, AfterPublish.KEEP, null)) {
            w.poll(0);
            Files.delete(a);
            write("b.etl", t, B); // its logger began again from the start
            w.poll(1_000);
            assertEquals(2, kafka.commits(), "both ends in the look that saw them");
            assertEquals(1, w.followed(), "the deleted file is no longer followed");
        }
        ProducerRecord<String, byte[]> aEnd = endMarkers().stream().filter(r -> r.key().startsWith("a:")).findFirst().orElseThrow();
        assertEquals("3", header(aEnd, SwapstreamConfig.HEADER_END_OF_SESSION));
        assertEquals("the file was deleted after 3 buffers, before it stopped growing", header(aEnd, SwapstreamConfig.HEADER_INGEST_ERROR));
        ProducerRecord<String, byte[]> bEnd = endMarkers().stream().filter(r -> r.key().startsWith("b:")).findFirst().orElseThrow();
        assertEquals("3", header(bEnd, SwapstreamConfig.HEADER_END_OF_SESSION));
        assertTrue(header(bEnd, SwapstreamConfig.HEADER_INGEST_ERROR).startsWith("the file was rewritten from the start"));
        assertTrue(kafka.committed(DEAD).isEmpty());
        // the end marker counts the records sent to the dead letters (the decode stage adds them to its at-ingest count): none here
        assertNull(header(aEnd, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS));
        assertNull(header(bEnd, SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS));
        assertEquals(6, indexes(raw()).size(), "the rewritten file's buffers of the same session are not published again");
    }

    @Test
    void aNewerFileOfTheSameLoggerEndsTheOlderOnceAllItsBuffersAreOut() throws Exception {
        long later = START + 600_000_000L;
        byte[] old = trace();
        String oldSession = session("web01", "NT Kernel Logger", START);
        write("old.etl", old, old.length - B + 10); // its last buffer not all written yet
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
            write("other.etl", trace("Swapstream", later), B); // another logger's file ends nothing
            w.poll(1_000);
            write("new.etl", trace("NT Kernel Logger", later), B);
            w.poll(2_000);
            assertTrue(endMarkers().isEmpty(), "a buffer of the older file is still to come");

            write("old.etl", old, old.length);
            w.poll(3_000); // far from the quiet time
            List<ProducerRecord<String, byte[]>> ofOld = raw().stream().filter(r -> r.key().equals(oldSession)).toList();
            ProducerRecord<String, byte[]> last = ofOld.get(ofOld.size() - 1);
            assertEquals(Integer.toString(old.length / B), header(last, SwapstreamConfig.HEADER_END_OF_SESSION),
                    "its last buffer, then its end, in the same look");
            assertEquals(old.length / B, indexes(ofOld).size());
            assertNull(header(last, SwapstreamConfig.HEADER_INGEST_ERROR));
            assertEquals(1, endMarkers().size(), "the other logger's and the newer file go on");
            assertEquals(1, said("old.etl: its logger started new.etl"), log.toString());
            assertEquals(2, w.open());
        }
    }

    @Test
    void aRenamedFileIsFollowedWhereItWentAndACopyIsNotPublishedTwice() throws Exception {
        byte[] t = trace();
        String s = session("web01", "NT Kernel Logger", START);
        Path a = write("a.etl", t, 2 * B);
        assumeTrue(Files.readAttributes(a, BasicFileAttributes.class).fileKey() != null, "a rename is followed by the file's identity");
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
            Path b = Files.move(a, watched.resolve("b.etl"));
            Files.write(b, Arrays.copyOfRange(t, 2 * B, 4 * B), StandardOpenOption.APPEND);
            w.poll(1_000);
            assertEquals(List.of(0L, 1L, 2L, 3L), indexes(raw()), "on from where it was, nothing again");
            assertEquals(b.toString(), header(raw().get(raw().size() - 1), SwapstreamConfig.HEADER_SOURCE_FILE));
            assertEquals(b.toString(), position(s).path());
            assertTrue(endMarkers().isEmpty(), "a rename is not a deletion");

            Files.copy(b, watched.resolve("c.etl"));
            w.poll(2_000);
            assertEquals(4, indexes(raw()).size(), "the copy holds the same session");
            assertEquals(1, said("c.etl: not followed: it holds session " + s + ", already followed in " + b), log.toString());
        }
    }

    @Test
    void whatIsNotATraceIsSaidOnceAndLeftAloneAndAnEmptyFileIsFollowedOnceItGrows() throws Exception {
        Files.writeString(watched.resolve("notes.txt"), "not a trace");
        Files.createDirectories(watched.resolve("older"));
        Files.writeString(watched.resolve("text.etl"), "a text file with the extension of a trace");
        Files.writeString(watched.resolve(WatchedFolder.STATUS_FILE), "result=ok\n");
        Path empty = Files.createFile(watched.resolve("empty.etl"));
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
            w.poll(1_000);
            w.poll(QUIET + 1_000);
            assertEquals(0, kafka.commits());
            assertEquals(1, said("notes.txt: not followed: not an .etl file"), log.toString());
            assertEquals(1, said("older: not followed: a folder"), log.toString());
            assertEquals(1, said("text.etl: not followed: its first bytes are not a buffer header: not an ETL file"), log.toString());
            assertEquals(1, said("empty.etl: empty; followed once it grows"), log.toString());
            assertEquals(0, said(WatchedFolder.STATUS_FILE), "the collection script's status file is not the watcher's to mention");

            Files.write(empty, trace());
            w.poll(QUIET + 2_000);
            assertEquals(9, indexes(raw()).size());
        }
    }

    @Test
    void aFileWhoseNameCannotBeAHostIsNotFollowed() throws Exception {
        byte[] t = trace();
        write("web%01.etl", t, t.length);
        try (DirectoryIngest w = watcher(null, AfterPublish.KEEP, null)) {
            w.poll(0);
            w.poll(1_000);
            w.poll(QUIET);
        }
        assertEquals(1, said("web%01.etl: not followed: its host name 'web%01' holds '%', which session ids reserve"), log.toString());
        assertEquals(List.of(), kafka.committed(), "no session id is made of that host");
    }

    @Test
    void anAbortedTransactionGoesAgainFromTheLastCommittedPositionAndAFencedWatcherTakesOver() throws Exception {
        byte[] t = trace();
        String s = session("web01", "NT Kernel Logger", START);
        write("h.etl", t, 2 * B);
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
            write("h.etl", t, 4 * B);
            kafka.producer().commitTransactionException = new KafkaException("a broker restarted");
            w.poll(1_000); // abortable: said, not thrown
            assertEquals(1, said("Kafka: a broker restarted; the open transaction is aborted and its buffers go again"), log.toString());
            assertEquals(1, kafka.credentialChecks, "a failing transaction may be a revoked credential: checked");
            assertEquals(2, position(s).nextIndex());

            kafka.producer().commitTransactionException = null;
            w.poll(2_000);
            assertEquals(1, said("resuming session " + s + " at buffer 2 (byte " + 2 * B + ")"), log.toString());
            assertEquals(List.of(0L, 1L, 2L, 3L), indexes(raw()), "each buffer committed once");

            kafka.producer().fenceProducer(); // another producer of the id took over
            write("h.etl", t, 6 * B);
            w.poll(3_000);
            assertEquals(1, said("a new producer takes over from the last committed positions"), log.toString());
            w.poll(4_000);
            assertEquals(2, kafka.producers.size());
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), indexes(raw()));
            assertEquals(6, position(s).nextIndex());
        }
    }

    @Test
    void aRestartedWatcherGoesOnFromItsCommittedPositionsAndDeletesAFileOnlyOnceItsEndIsCommitted() throws Exception {
        byte[] t = trace();
        String s = session("web01", "NT Kernel Logger", START);
        Path h = write("h.etl", t, 3 * B);
        try (DirectoryIngest w = watcher()) {
            w.poll(0);
        }
        write("h.etl", t, t.length);
        try (DirectoryIngest w = watcher("web01", AfterPublish.parse("delete"), null)) {
            w.poll(10_000);
            assertEquals(1, said("h.etl: resuming session " + s + " at buffer 3 (byte " + 3 * B + ")"), log.toString());
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), indexes(raw()));

            kafka.producer().commitTransactionException = new KafkaException("the coordinator moved");
            w.poll(10_000 + QUIET);
            assertTrue(Files.exists(h), "its end did not commit: the file stays");
            kafka.producer().commitTransactionException = null;
            w.poll(10_000 + QUIET + 1); // aborted; the file followed again from its committed position, its quiet time anew
            assertTrue(Files.exists(h));
            w.poll(10_000 + 2 * QUIET + 1);
            assertFalse(Files.exists(h), "its end committed: the file is deleted");
            assertEquals(1, said("h.etl: session " + s + " published and ended: deleted"), log.toString());
        }
        assertEquals(1, endMarkers().size());
        assertEquals(t.length / B, indexes(raw()).size());

        // killed between the commit and the delete: the next watcher deletes the file and publishes nothing of it
        Files.write(h, t);
        long commits = kafka.commits();
        try (DirectoryIngest w = watcher("web01", AfterPublish.parse("delete"), null)) {
            w.poll(0);
        }
        assertEquals(1, said("h.etl: session " + s + " was published and ended before; not published again"), log.toString());
        assertFalse(Files.exists(h));
        assertEquals(commits, kafka.commits());
    }
}
