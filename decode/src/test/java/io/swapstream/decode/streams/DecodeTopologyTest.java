package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.inspect.FileInventory;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import io.swapstream.stage.IncompleteFrom;
import io.swapstream.stage.StageSensors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The decode topology on the test driver: outputs per topic, duplicates, re-ingest, a bad key, gaps, idle sessions. */
class DecodeTopologyTest {
    @TempDir Path dir;
    static final int SIZE = 64 * 1024;

    @Test
    void decodesBuffersIntoEveryOutputTopic() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000), 0x28);
        // batches come after events their processor logged while they were open, as the kernel writes them
        assertTrue(FileInventory.of(f, null).batchesAfterNewerEvents() > 0);
        List<SwitchRow> expected = new ArrayList<>();
        SessionDecoder offline = SessionDecoder.decodeFile(f, "h", null, expected::add, null);
        assertEquals(0, offline.counters().switchesOutOfOrder + offline.counters().lateEvents);
        String session = offline.session().session();
        try (TopologyTestDriver driver = driver("state", Map.of(SwapstreamConfig.DECODE_ROWS, "true"))) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            for (int i = 0; i < bytes.length / SIZE; i++) {
                raw.pipeInput(record(session, buffer(bytes, i), i, false));
                if (i == 2) raw.pipeInput(record(session, buffer(bytes, 1), 1, false)); // a resent buffer
            }
            raw.pipeInput(record(session, new byte[0], bytes.length / SIZE, true));
            // a buffer and the end marker it has, sent again after its end (a restarted ingester that could not find its
            // last transaction's records): skipped; a buffer past its end: a dead letter
            raw.pipeInput(record(session, buffer(bytes, 0), 0, false));
            raw.pipeInput(record(session, new byte[0], bytes.length / SIZE, true));
            raw.pipeInput(record(session, buffer(bytes, 0), bytes.length / SIZE, false));
            raw.pipeInput(record(null, new byte[] {1}, 0, false));

            List<SwitchRow> rows = new ArrayList<>();
            List<TestRecord<String, SwitchBatch>> batches = driver.createOutputTopic("etw.switch-batches", new StringDeserializer(),
                    new SwitchBatchSerde()).readRecordsToList();
            for (int i = 0; i < batches.size(); i++) {
                rows.addAll(batches.get(i).value().rows());
                // numbered from 0 in the order sent, the resent buffer and the file sent again adding none
                assertEquals(String.valueOf(i), header(batches.get(i), SwapstreamConfig.HEADER_BATCH_SEQUENCE));
                assertEquals(null, IncompleteFrom.of(batches.get(i).headers()), "a complete session's batches carry no mark");
            }
            assertTrue(batches.size() > 1);
            assertEquals(expected, rows);
            for (int i = 1; i < rows.size(); i++) assertTrue(rows.get(i - 1).timestamp() <= rows.get(i).timestamp());
            TestOutputTopic<String, io.swapstream.schemas.avro.ContextSwitch> switches = driver.createOutputTopic(
                    "etw.context-switches", new StringDeserializer(), new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ContextSwitch.class));
            assertEquals(expected, switches.readValuesToList().stream().map(AvroRecords::of).toList(), "rows on request");
            List<TraceSession> s = sessions(driver);
            assertEquals(2, s.size());
            assertTrue(!s.get(0).getComplete() && s.get(0).getEndReason() == null);
            assertTrue(s.get(1).getComplete());
            assertEquals("end-marker", s.get(1).getEndReason());
            assertEquals(expected.size(), s.get(1).getSwitchCount());
            TestOutputTopic<String, ThreadInfo> threads = driver.createOutputTopic("etw.threads", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(ThreadInfo.class));
            List<TestRecord<String, ThreadInfo>> t = threads.readRecordsToList();
            assertEquals(s.get(1).getThreadRecords(), t.size());
            assertTrue(t.stream().allMatch(r -> r.key().startsWith(session + "/")));
            List<TestRecord<String, byte[]>> letters = deadLetters(driver);
            assertEquals(2, letters.size());
            assertTrue(header(letters.get(0), SwapstreamConfig.HEADER_ERROR).contains("has ended (end-marker)"));
            assertTrue(header(letters.get(1), SwapstreamConfig.HEADER_ERROR).contains("without a session key"));
            assertEquals(0, count(driver, 'c'), "an ended session keeps no checkpoint");
            assertEquals(0, count(driver, 'r'), "nor buffers");
            // the task's own metrics: what it sent, its dead letters by reason, no session left open
            assertEquals(expected.size(), metric(driver, StageSensors.SWITCHES_OUT + "-total", null));
            assertEquals(1, metric(driver, StageSensors.DEAD_LETTERS + "-total", "after-session-end"));
            assertEquals(1, metric(driver, StageSensors.DEAD_LETTERS + "-total", "no-session-key"));
            assertEquals(1, metric(driver, StageSensors.SESSIONS_ENDED + "-total", null));
            assertEquals(0, metric(driver, StageSensors.SESSIONS_OPEN, null));
        }
    }

    /**
     * A file-mode trace cut off half way, ended by the ingester's marker with its error: its processors' buffers end at
     * different times. Every switch sent before the end is before the earliest processor's last event, and is the
     * whole file's switch, derived times and all; what the merge held goes out at the end marked with that time, in
     * batches and rows, and some of it is not what the whole file says.
     */
    @Test
    void aSessionCutShortMarksWhatItSendsPastTheEarliestProcessorsLastEvent() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(20_000), 0x28);
        List<SwitchRow> whole = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, whole::add, null).session().session();
        byte[] bytes = Files.readAllBytes(f);
        int cut = bytes.length / SIZE / 2;
        try (TopologyTestDriver driver = driver("state", Map.of(SwapstreamConfig.DECODE_ROWS, "true"))) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            pipeCutShort(raw, session, bytes, cut);
            List<TestRecord<String, SwitchBatch>> batches = driver.createOutputTopic("etw.switch-batches", new StringDeserializer(),
                    new SwitchBatchSerde()).readRecordsToList();
            Long knownUntil = null;
            List<SwitchRow> before = new ArrayList<>();
            List<SwitchRow> past = new ArrayList<>();
            for (TestRecord<String, SwitchBatch> b : batches) {
                Long from = IncompleteFrom.of(b.headers());
                if (from == null) {
                    assertEquals(null, knownUntil, "no unmarked batch after a marked one");
                } else {
                    if (knownUntil != null) assertEquals(knownUntil, from, "one time for the session");
                    knownUntil = from;
                }
                for (SwitchRow c : b.value().rows()) (from == null ? before : past).add(c);
            }
            assertTrue(knownUntil != null && knownUntil != Long.MIN_VALUE, "every processor wrote a buffer before the cut");
            long known = knownUntil;
            assertTrue(before.size() > 1000 && !past.isEmpty(), before.size() + " before, " + past.size() + " past");
            assertTrue(before.stream().allMatch(c -> c.timeNanos() < known));
            assertEquals(whole.stream().filter(c -> c.timeNanos() < known).toList(), before, "the whole file's switches up to then");
            long last = past.get(past.size() - 1).timeNanos();
            assertFalse(whole.stream().filter(c -> c.timeNanos() >= known && c.timeNanos() <= last).toList()
                    .equals(past.stream().filter(c -> c.timeNanos() >= known).toList()), "past it, the switches are not the whole file's");
            // the rows on request carry the same mark
            var rows = driver.createOutputTopic("etw.context-switches", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ContextSwitch.class)).readRecordsToList();
            assertEquals(before.size() + past.size(), rows.size());
            assertEquals(past.size(), rows.stream().filter(r -> IncompleteFrom.of(r.headers()) != null).count());
            assertFalse(sessions(driver).get(1).getComplete());
        }
    }

    /**
     * A trace cut off before every processor wrote a buffer: a processor that showed nothing may have run anything, so the
     * session is known until no time, and every batch it sends is marked so.
     */
    @Test
    void aSessionCutBeforeAProcessorWroteABufferIsKnownUntilNoTime() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(20_000), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, c -> { }, null).session().session();
        byte[] bytes = Files.readAllBytes(f);
        // the buffers before the last processor's first one
        int cut = 0;
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        try (var r = io.swapstream.etw.EtlReader.open(f)) {
            while (r.next() && (seen.add(r.header().processor()) ? seen.size() < 4 : true)) cut++;
        }
        assertTrue(cut > 1 && seen.size() == 4, cut + " buffers");
        try (TopologyTestDriver driver = driver("state", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            pipeCutShort(raw, session, bytes, cut);
            List<TestRecord<String, SwitchBatch>> batches = driver.createOutputTopic("etw.switch-batches", new StringDeserializer(),
                    new SwitchBatchSerde()).readRecordsToList();
            assertFalse(batches.isEmpty());
            for (TestRecord<String, SwitchBatch> b : batches) assertEquals(Long.MIN_VALUE, IncompleteFrom.of(b.headers()));
        }
    }

    /**
     * Another recording under a live session's id (a trace made up with its host, logger and start time, sent
     * by another ingester): its buffers, a buffer without a stream and its end marker go to the dead letters,
     * and the session's own buffers go on to the same switches and a complete end.
     */
    @Test
    void anotherRecordingUnderALiveSessionsIdEndsExtendsAndOverwritesNothing() throws Exception {
        Path f = dir.resolve("own.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000), 0x28);
        Path g = dir.resolve("other.etl");
        TraceGenerator.generate(g, GeneratorOptions.defaults().withShape(2, 3, 3).withSwitches(2000).withSeed(7), 0x28);
        List<SwitchRow> expected = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, expected::add, null).session().session();
        assertEquals(session, SessionDecoder.decodeFile(g, "h", null, c -> { }, null).session().session(), "one session id");
        String own = io.swapstream.ingest.BufferPublisher.streamOf(f);
        String other = io.swapstream.ingest.BufferPublisher.streamOf(g);
        assertFalse(own.equals(other));
        try (TopologyTestDriver driver = driver("streams", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            byte[] forged = Files.readAllBytes(g);
            int n = bytes.length / SIZE;
            for (int i = 0; i < n; i++) {
                raw.pipeInput(record(session, buffer(bytes, i), i, false, own));
                if (i == 1) {
                    raw.pipeInput(record(session, buffer(forged, 0), 0, false, other)); // over a buffer it has
                    raw.pipeInput(record(session, buffer(forged, 2), 2, false, other)); // the next it expects
                    raw.pipeInput(record(session, buffer(forged, 3), 2, false, null)); // and without a stream
                    raw.pipeInput(record(session, new byte[0], 3, true, other)); // its end
                }
            }
            raw.pipeInput(record(session, new byte[0], n, true, own));
            List<SwitchRow> rows = new ArrayList<>();
            driver.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde()).readValuesToList()
                    .forEach(b -> rows.addAll(b.rows()));
            assertEquals(expected, rows);
            TraceSession last = sessions(driver).get(1);
            assertTrue(last.getComplete(), last.toString());
            assertEquals(expected.size(), last.getSwitchCount());
            assertEquals(n, last.getBuffers());
            List<TestRecord<String, byte[]>> letters = deadLetters(driver);
            assertEquals(4, letters.size());
            for (TestRecord<String, byte[]> l : letters) {
                assertTrue(header(l, SwapstreamConfig.HEADER_ERROR).contains("belongs to the recording that began it (stream " + own + ")"),
                        header(l, SwapstreamConfig.HEADER_ERROR));
            }
            assertTrue(header(letters.get(2), SwapstreamConfig.HEADER_ERROR).contains("(stream not given)"));
            assertEquals(4, metric(driver, StageSensors.DEAD_LETTERS + "-total", "other-stream"));
        }
    }

    /** A session key holding '/' (the separator of the keys built on session ids) is refused. */
    @Test
    void aSessionKeyWithASlashIsADeadLetter() {
        try (TopologyTestDriver driver = driver("slash", Map.of())) {
            rawBuffers(driver).pipeInput(record("h:a/b:1", new byte[] {1}, 0, false));
            List<TestRecord<String, byte[]>> letters = deadLetters(driver);
            assertEquals(1, letters.size());
            assertTrue(header(letters.get(0), SwapstreamConfig.HEADER_ERROR).contains("'/'"));
        }
    }

    /** The driver's task's value of the stage's metric {@code name} (with tag reason {@code reason}, when given). */
    static long metric(TopologyTestDriver driver, String name, String reason) {
        return (long) driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals(StageSensors.GROUP) && e.getKey().name().equals(name)
                        && (reason == null || reason.equals(e.getKey().tags().get(StageSensors.REASON_TAG))))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    @Test
    void buffersThatArriveEarlyWaitForTheGapAndLeaveTheStore() throws Exception {
        Path f = dir.resolve("o.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        List<SwitchRow> expected = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, expected::add, null).session().session();
        try (TopologyTestDriver driver = driver("state2", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int n = bytes.length / SIZE;
            // 0, then every pair swapped: 2 1 4 3 ...
            List<Integer> order = new ArrayList<>(List.of(0));
            for (int i = 1; i < n; i += 2) {
                if (i + 1 < n) order.add(i + 1);
                order.add(i);
            }
            for (int i : order) {
                raw.pipeInput(record(session, buffer(bytes, i), i, false));
                // an early buffer waits in the store only until the gap before it fills
                assertTrue(count(driver, 'e') <= 1);
            }
            raw.pipeInput(record(session, new byte[0], n, true));
            List<SwitchRow> rows = new ArrayList<>();
            for (SwitchBatch b : batches(driver)) rows.addAll(b.rows());
            assertEquals(expected, rows);
            assertTrue(deadLetters(driver).isEmpty());
            assertEquals(0, count(driver, 'e'));
        }
    }

    @Test
    void buffersHeldApartBeforeTheSessionsFirstBufferAreTakenWhenItComes() throws Exception {
        Path f = dir.resolve("e.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x29);
        List<SwitchRow> expected = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, expected::add, null).session().session();
        try (TopologyTestDriver driver = driver("state8", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int n = bytes.length / SIZE;
            assertTrue(n >= 4, n + " buffers");
            // 2 and 1 come before the session is in memory, so the stage counts them when buffer 0 brings it in
            raw.pipeInput(record(session, buffer(bytes, 2), 2, false));
            raw.pipeInput(record(session, buffer(bytes, 1), 1, false));
            assertEquals(2, count(driver, 'e'));
            for (int i = 0; i < n; i++) {
                if (i != 1 && i != 2) raw.pipeInput(record(session, buffer(bytes, i), i, false));
                if (i == 0) assertEquals(0, count(driver, 'e'), "taken with buffer 0");
            }
            raw.pipeInput(record(session, new byte[0], n, true));
            List<SwitchRow> rows = new ArrayList<>();
            for (SwitchBatch b : batches(driver)) rows.addAll(b.rows());
            assertEquals(expected, rows);
            assertTrue(deadLetters(driver).isEmpty());
        }
    }

    @Test
    void aMissingBufferIsReportedAtTheEndAndTheSessionIsIncomplete() throws Exception {
        Path f = dir.resolve("m.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state3", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int n = bytes.length / SIZE;
            for (int i = 0; i < n; i++) if (i != 2) raw.pipeInput(record(session, buffer(bytes, i), i, false));
            raw.pipeInput(record(session, new byte[0], n, true));
            List<TestRecord<String, byte[]>> letters = deadLetters(driver);
            assertEquals(1, letters.size());
            assertTrue(header(letters.get(0), SwapstreamConfig.HEADER_ERROR).contains("buffers 2 to " + (n - 1) + " of session"),
                    header(letters.get(0), SwapstreamConfig.HEADER_ERROR));
            TraceSession end = sessions(driver).get(1);
            assertFalse(end.getComplete());
            assertEquals(n - 2, end.getDeadLetters());
            assertEquals(1, end.getLossReasons().size());
            assertEquals(0, count(driver, 'e'), "buffers that waited for the gap are dropped at the end");
        }
    }

    @Test
    void aRestoreStartsAtTheLastCheckpoint() throws Exception {
        Path f = dir.resolve("c.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(20_000), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state6", Map.of(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS, "2"))) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            assertTrue(bytes.length >= 7 * SIZE, bytes.length + " bytes");
            raw.pipeInput(record(session, buffer(bytes, 0), 0, false));
            raw.pipeInput(record(session, buffer(bytes, 1), 1, false));
            assertEquals(1, count(driver, 'c'), "the first checkpoint, after buffer 1");
            assertEquals(0, count(driver, 'r'), "no buffer since it");
            for (int i = 2; i < 7; i++) raw.pipeInput(record(session, buffer(bytes, i), i, false));
            // checkpoints after buffers 1, 3 and 5: the last kept, and the buffer since (6)
            assertEquals(1, count(driver, 'c'));
            assertEquals(1, count(driver, 'r'));
        }
        // 1 MiB buffers reach the checkpoint bytes in 32 buffers: fewer than a stream thread may process before it commits
        assertFalse(checkpointDue(32, 32L << 20, 256));
        assertFalse(checkpointDue(127, 127L << 20, 256));
        assertTrue(checkpointDue(128, 128L << 20, 256));
        assertTrue(checkpointDue(256, 1L << 20, 256));
        assertTrue(checkpointDue(2, 0, 2));
        assertThrows(org.apache.kafka.common.config.ConfigException.class, () -> driver("state7", Map.of(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS,
                String.valueOf(SwapstreamConfig.REDO_SLOTS + 1))), "the redo slots hold the buffers since the checkpoint");
    }

    /** No buffer for the idle timeout: the session ends incomplete, its state goes, a later buffer is a dead letter. */
    @Test
    void aQuietSessionEndsAfterTheIdleTimeout() throws Exception {
        Path f = dir.resolve("q.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000), 0x28);
        List<SwitchRow> all = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, all::add, null).session().session();
        try (TopologyTestDriver driver = driver("state4", Map.of(SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS, "60000"))) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            for (int i = 0; i < 3; i++) raw.pipeInput(record(session, buffer(bytes, i), i, false));
            assertEquals(3, count(driver, 'r'), "the buffers since the (first) checkpoint");
            driver.advanceWallClockTime(Duration.ofSeconds(30));
            assertEquals(1, sessions(driver).size(), "not yet");
            driver.advanceWallClockTime(Duration.ofSeconds(40));
            List<TraceSession> s = sessions(driver);
            assertEquals(1, s.size());
            TraceSession end = s.get(0);
            assertEquals("idle-timeout", end.getEndReason());
            assertFalse(end.getComplete());
            assertTrue(end.getLossReasons().get(0).contains("no buffer for 60 s"), end.getLossReasons().toString());
            long rows = batches(driver).stream().mapToLong(SwitchBatch::count).sum();
            assertEquals(rows, end.getSwitchCount(), "the switches of what arrived, every processor's last one included");
            assertEquals(0, count(driver, 'c') + count(driver, 'r'),
                    "its state is freed");
            raw.pipeInput(record(session, buffer(bytes, 3), 3, false));
            assertTrue(header(deadLetters(driver).get(0), SwapstreamConfig.HEADER_ERROR).contains("has ended (idle-timeout)"));
        }
    }

    /**
     * An ended session is remembered for its retention (a buffer of it sent again is skipped, one past its end
     * is a dead letter), then forgotten: the store is empty, and a buffer of it after that starts it again.
     */
    @Test
    void anEndedSessionLeavesTheStoreOnceItsRetentionHasPassed() throws Exception {
        Path f = dir.resolve("k.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(2000), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state8", Map.of(SwapstreamConfig.SESSION_RETENTION_MS, "60000"))) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int n = bytes.length / SIZE;
            for (int i = 0; i < n; i++) raw.pipeInput(record(session, buffer(bytes, i), i, false));
            raw.pipeInput(record(session, new byte[0], n, true));
            assertEquals(2, sessions(driver).size());
            driver.advanceWallClockTime(Duration.ofSeconds(50));
            raw.pipeInput(record(session, buffer(bytes, 0), 0, false));
            raw.pipeInput(record(session, buffer(bytes, 0), n, false));
            assertTrue(sessions(driver).isEmpty(), "a buffer sent again starts nothing");
            assertEquals(1, deadLetters(driver).size(), "one past its end is a dead letter");
            assertTrue(DecodeTopology.hasEnded(driver.<String, byte[]>getKeyValueStore(DecodeTopology.PROGRESS_STORE).get(session)));
            driver.advanceWallClockTime(Duration.ofSeconds(20));
            assertFalse(driver.getKeyValueStore(DecodeTopology.PROGRESS_STORE).all().hasNext(), "the store is empty");
            raw.pipeInput(record(session, buffer(bytes, 0), 0, false));
            List<TraceSession> again = sessions(driver);
            assertEquals(1, again.size(), "the session starts again");
            assertEquals(null, again.get(0).getEndReason());
            assertTrue(deadLetters(driver).isEmpty());
        }
    }

    @Test
    void aMalformedHeaderValueIsNoReasonToStop() throws Exception {
        Path f = dir.resolve("h.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(2000), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state5", Map.of())) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            TestRecord<String, byte[]> r = record(session, buffer(bytes, 0), 0, false);
            r.headers().add(SwapstreamConfig.HEADER_MAX_WAIT_REASON, "forty".getBytes(StandardCharsets.UTF_8));
            r.headers().remove(SwapstreamConfig.HEADER_BUFFER_INDEX);
            r.headers().add(SwapstreamConfig.HEADER_BUFFER_INDEX, "zero".getBytes(StandardCharsets.UTF_8));
            raw.pipeInput(r);
            raw.pipeInput(record(session, buffer(bytes, 1), 1, false));
            assertEquals(1, sessions(driver).size());
            assertTrue(deadLetters(driver).isEmpty());
        }
    }

    /**
     * A processor idle for 40 s in a file session: its buffer comes more than 30 s late. Sent with the
     * lateness its ingester walked the file for, the session decodes exactly as offline; sent as a live
     * session whose merge may wait 10 s, the late switches are counted, the session is not complete and
     * says why.
     */
    @Test
    void aLateBufferIsWaitedForWithTheFilesLatenessAndCountedPastTheLimit() throws Exception {
        Path f = dir.resolve("idle.etl");
        long second = 10_000_000L;
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(40_000).withShape(4, 2, 2).withSeed(8)
                .withQuietSpell(new GeneratorOptions.QuietSpell(1, 5 * second, 40 * second)), 0x28);
        long lateness = io.swapstream.etw.BufferLateness.of(f).max();
        assertTrue(lateness > 30 * second, lateness + " ticks");
        List<SwitchRow> expected = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, expected::add, null).session().session();
        byte[] bytes = Files.readAllBytes(f);
        int n = bytes.length / SIZE;
        for (boolean withLateness : new boolean[] {true, false}) {
            Map<String, String> config = Map.of(SwapstreamConfig.DECODE_MAX_LATENESS_MS, "10000");
            try (TopologyTestDriver driver = driver("late-" + withLateness, config)) {
                TestInputTopic<String, byte[]> raw = rawBuffers(driver);
                for (int i = 0; i < n; i++) {
                    TestRecord<String, byte[]> r = record(session, buffer(bytes, i), i, false);
                    if (i == 0 && withLateness) {
                        r.headers().add(SwapstreamConfig.HEADER_LATENESS_TICKS, String.valueOf(lateness).getBytes(StandardCharsets.UTF_8));
                    }
                    raw.pipeInput(r);
                }
                raw.pipeInput(record(session, new byte[0], n, true));
                List<SwitchRow> rows = new ArrayList<>();
                driver.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde())
                        .readValuesToList().forEach(b -> rows.addAll(b.rows()));
                TraceSession end = sessions(driver).get(1);
                assertEquals(lateness * 100, end.getMaxLatenessNanos(), "10 MHz: 100 ns a tick");
                assertEquals(expected.size(), rows.size());
                if (withLateness) {
                    assertEquals(expected, rows);
                    assertEquals(0, end.getSwitchesOutOfOrder());
                    assertTrue(end.getComplete());
                } else {
                    long outOfOrder = 0;
                    long latest = Long.MIN_VALUE;
                    for (SwitchRow r : rows) {
                        if (r.timestamp() < latest) {
                            outOfOrder++;
                            assertEquals(null, r.newThreadTimeSinceLastNanos(), r::toString);
                            assertEquals(null, r.oldThreadRunNanos(), r::toString);
                        }
                        latest = Math.max(latest, r.timestamp());
                    }
                    assertTrue(outOfOrder > 0);
                    assertEquals(outOfOrder, end.getSwitchesOutOfOrder());
                    assertFalse(end.getComplete());
                    assertTrue(end.getLossReasons().stream().anyMatch(x -> x.contains("came after later ones")), end.getLossReasons().toString());
                }
            }
        }
    }

    static byte[] buffer(byte[] file, int i) {
        return Arrays.copyOfRange(file, i * SIZE, (i + 1) * SIZE);
    }

    /** Entries of the store holding {@code part} of the sessions: 'c' checkpoints, 'r' redo entries, 'e' early buffers. */
    static long count(TopologyTestDriver driver, char part) {
        String store = switch (part) {
            case 'c' -> DecodeStores.CHECKPOINTS;
            case 'r' -> DecodeStores.REDO;
            case 'e' -> DecodeStores.EARLY;
            default -> throw new IllegalArgumentException("no part " + part);
        };
        long n = 0;
        for (var it = driver.<String, byte[]>getKeyValueStore(store).all(); it.hasNext(); it.next()) n++;
        return n;
    }

    static List<SwitchBatch> batches(TopologyTestDriver driver) {
        return driver.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde()).readValuesToList();
    }

    static List<TraceSession> sessions(TopologyTestDriver driver) {
        return driver.createOutputTopic("etw.sessions", new StringDeserializer(), new SingleObjectAvroSerde<>(TraceSession.class))
                .readValuesToList();
    }

    static List<TestRecord<String, byte[]>> deadLetters(TopologyTestDriver driver) {
        return driver.createOutputTopic("etw.dead-letters", new StringDeserializer(), new ByteArrayDeserializer()).readRecordsToList();
    }

    /** The decode topology on a test driver with its own state directory. */
    TopologyTestDriver driver(String state, Map<String, String> config) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "decode-test-" + state);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(state).toString());
        org.apache.kafka.streams.StreamsBuilder builder = new org.apache.kafka.streams.StreamsBuilder();
        DecodeTopology.build(builder, DecodeSettings.from(config));
        return new TopologyTestDriver(builder.build(), p);
    }

    static TestInputTopic<String, byte[]> rawBuffers(TopologyTestDriver driver) {
        return driver.createInputTopic("etw.raw-buffers", new StringSerializer(), new ByteArraySerializer());
    }

    static TestRecord<String, byte[]> record(String key, byte[] value, long index, boolean end) {
        return record(key, value, index, end, null);
    }

    static TestRecord<String, byte[]> record(String key, byte[] value, long index, boolean end, String stream) {
        RecordHeaders h = new RecordHeaders();
        if (stream != null) h.add(SwapstreamConfig.HEADER_STREAM, stream.getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_HOST, "h".getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_BUFFER_INDEX, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
        if (end) h.add(SwapstreamConfig.HEADER_END_OF_SESSION, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
        return new TestRecord<>(key, value, h);
    }

    static String header(TestRecord<String, ?> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    /** Whether the decode stage checkpoints a session {@code buffers} and {@code bytes} after its last checkpoint. */
    private static boolean checkpointDue(long buffers, long bytes, int checkpointBuffers) {
        return DecodeSettings.from(Map.of(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS, String.valueOf(checkpointBuffers)))
                .checkpointEvery().reached(buffers, bytes);
    }

    /** The first {@code cut} buffers of a file, then the end marker an ingester sends for a file that ends part way into a buffer. */
    private static void pipeCutShort(TestInputTopic<String, byte[]> raw, String session, byte[] bytes, int cut) {
        for (int i = 0; i < cut; i++) raw.pipeInput(record(session, buffer(bytes, i), i, false));
        TestRecord<String, byte[]> end = record(session, new byte[0], cut, true);
        end.headers().add(SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, "1".getBytes(StandardCharsets.UTF_8));
        end.headers().add(SwapstreamConfig.HEADER_INGEST_ERROR, "truncated".getBytes(StandardCharsets.UTF_8));
        raw.pipeInput(end);
    }
}
