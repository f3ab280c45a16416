package io.swapstream.aggregate.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.Rollups;
import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.streams.DecodeSettings;
import io.swapstream.decode.streams.DecodeTopology;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import io.swapstream.stage.IncompleteFrom;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file-mode trace cut off half way (as a host that crashes leaves it), through the decode, aggregate and rollup
 * topologies on the test driver: its processors' buffers end at different times, so past the earliest one's last event
 * the switches of the others are missing. Every row computed from that time is marked, and stays out of the roll-ups;
 * every row not marked equals the whole file's.
 */
class IncompleteSessionTest {
    static final int BUFFER = 64 * 1024;
    static final long WINDOW = 100_000_000L;
    @TempDir Path dir;

    @Test
    void rowsPastTheEarliestProcessorsEndAreMarkedAndKeptOutOfTheRollups() throws Exception {
        Path f = dir.resolve("t.etl");
        Whole w = whole(f);
        String session = w.session();
        Map<String, ThreadStats> truth = w.rows();

        byte[] bytes = Files.readAllBytes(f);
        int cut = bytes.length / BUFFER / 2;
        List<TestRecord<String, SwitchBatch>> batches;
        List<TraceSession> sessions;
        try (TopologyTestDriver decode = decode()) {
            var raw = decode.createInputTopic("etw.raw-buffers", new StringSerializer(), new ByteArraySerializer());
            for (int i = 0; i < cut; i++) raw.pipeInput(raw(session, Arrays.copyOfRange(bytes, i * BUFFER, (i + 1) * BUFFER), i, null));
            // the ingester's end marker for a file that stopped growing part way into a buffer
            raw.pipeInput(raw(session, new byte[0], cut, "the file stopped growing 1000 bytes into the buffer: truncated"));
            batches = decode.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde()).readRecordsToList();
            sessions = decode.createOutputTopic("etw.sessions", new StringDeserializer(), new SingleObjectAvroSerde<>(TraceSession.class))
                    .readValuesToList();
        }
        assertFalse(sessions.get(sessions.size() - 1).getComplete());
        // the batches the merge let out while the session ran carry no mark; those it held, sent at the end, carry one time
        Long knownUntil = null;
        long lastUnmarked = Long.MIN_VALUE;
        for (TestRecord<String, SwitchBatch> b : batches) {
            Long from = IncompleteFrom.of(b.headers());
            SwitchBatch s = b.value();
            if (from == null) {
                assertNull(knownUntil, "no unmarked batch after a marked one");
                if (s.count() > 0) lastUnmarked = s.timeNanos(s.count() - 1);
            } else {
                if (knownUntil != null) assertEquals(knownUntil, from);
                knownUntil = from;
            }
        }
        assertNotNull(knownUntil, "the held switches went out marked");
        assertTrue(lastUnmarked < knownUntil, "what went out unmarked is before the time known");

        List<TestRecord<String, ThreadStats>> rows = aggregateRows(session, batches, sessions);
        List<ThreadStats> complete = new ArrayList<>();
        int marked = 0;
        int wrong = 0;
        int wholeSessionRows = 0;
        for (TestRecord<String, ThreadStats> r : rows) {
            ThreadStats t = r.value();
            if (!t.getFinal$()) continue;
            if (r.key().split("/").length == 2) {
                // every whole-session row spans the session's end, past the time known
                assertFalse(t.getComplete(), r.key());
                wholeSessionRows++;
                continue;
            }
            assertEquals(t.getWindowEndNanos() <= knownUntil, t.getComplete(), r.key() + " ends " + t.getWindowEndNanos() + ", known until " + knownUntil);
            if (t.getComplete()) {
                // computed from every processor: the whole file's row, names and all
                assertEquals(truth.get(r.key()), t, r.key());
                complete.add(t);
            } else {
                marked++;
                if (!unlabelled(t).equals(unlabelled(truth.get(r.key())))) wrong++;
            }
        }
        assertTrue(complete.size() > 50, complete.size() + " complete window rows");
        assertTrue(marked > 0 && wholeSessionRows > 0);
        assertTrue(wrong > 0, "what is marked is not what the whole file says: " + marked + " rows marked");

        // the roll-ups take the complete rows alone: as the offline roll-up of those
        try (TopologyTestDriver rollup = rollup()) {
            var in = rollup.createInputTopic("etw.thread-stats", new StringSerializer(), new SingleObjectAvroSerde<>(ThreadStats.class));
            for (TestRecord<String, ThreadStats> r : rows) in.pipeInput(r.key(), r.value());
            rollup.advanceWallClockTime(Duration.ofMinutes(5));
            List<KeyValue<String, ProcessStats>> p = rollup.createOutputTopic("etw.process-stats", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(ProcessStats.class)).readKeyValuesToList();
            List<KeyValue<String, HostStats>> h = rollup.createOutputTopic("etw.host-stats", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(HostStats.class)).readKeyValuesToList();
            Rollups processes = new Rollups(RollupGroup.Kind.PROCESS);
            processes.addAll(complete);
            Rollups hosts = new Rollups(RollupGroup.Kind.HOST);
            hosts.addAll(complete);
            assertEquals(byKey(processes.processRows(), x -> RollupTopology.rowKey(x.getProcessName() == null ? null : x.getProcessName().toString(),
                    x.getWindowStartNanos())), latest(p));
            assertEquals(byKey(hosts.hostRows(), x -> RollupTopology.rowKey(x.getHost().toString(), x.getWindowStartNanos())), latest(h));
            assertTrue(p.stream().allMatch(kv -> kv.value.getRevision() == 0), "one host: no revision");
            long lastEnd = h.stream().mapToLong(kv -> kv.value.getWindowEndNanos()).max().orElseThrow();
            assertTrue(lastEnd <= knownUntil, "no roll-up window past the time known");
        }
    }

    /**
     * The whole file, in full, through a decode stage whose merge may hold 1 MiB: its memory cap lets switches out
     * before every processor's buffers have passed them. From then on the batches say the time known, the windows
     * after it are marked, the session is not complete; every row not marked is still the whole file's.
     */
    @Test
    void windowsAfterTheMergeLetSwitchesOutEarlyAreMarked() throws Exception {
        Path f = dir.resolve("t.etl");
        Whole w = whole(f);
        String session = w.session();
        Map<String, ThreadStats> truth = w.rows();

        byte[] bytes = Files.readAllBytes(f);
        int buffers = bytes.length / BUFFER;
        List<TestRecord<String, SwitchBatch>> batches;
        List<TraceSession> sessions;
        StreamsBuilder b = new StreamsBuilder();
        DecodeTopology.build(b, DecodeSettings.from(Map.of(SwapstreamConfig.DECODE_MAX_QUEUE_BYTES, String.valueOf(1 << 20))));
        try (TopologyTestDriver decode = new TopologyTestDriver(b.build(), props("decode-capped"))) {
            var raw = decode.createInputTopic("etw.raw-buffers", new StringSerializer(), new ByteArraySerializer());
            for (int i = 0; i < buffers; i++) raw.pipeInput(raw(session, Arrays.copyOfRange(bytes, i * BUFFER, (i + 1) * BUFFER), i, null));
            RecordHeaders end = new RecordHeaders();
            end.add(SwapstreamConfig.HEADER_HOST, "h".getBytes(StandardCharsets.UTF_8));
            end.add(SwapstreamConfig.HEADER_BUFFER_INDEX, String.valueOf(buffers).getBytes(StandardCharsets.UTF_8));
            end.add(SwapstreamConfig.HEADER_END_OF_SESSION, String.valueOf(buffers).getBytes(StandardCharsets.UTF_8));
            raw.pipeInput(new TestRecord<>(session, new byte[0], end));
            batches = decode.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde()).readRecordsToList();
            sessions = decode.createOutputTopic("etw.sessions", new StringDeserializer(), new SingleObjectAvroSerde<>(TraceSession.class))
                    .readValuesToList();
        }
        TraceSession done = sessions.get(sessions.size() - 1);
        assertFalse(done.getComplete(), String.valueOf(done));
        assertTrue(done.getLossReasons().toString().contains("left the merge before every processor's buffers had passed them"),
                done.getLossReasons().toString());
        Long knownUntil = null;
        int markedBatches = 0;
        for (TestRecord<String, SwitchBatch> r : batches) {
            Long from = IncompleteFrom.of(r.headers());
            if (from == null) assertNull(knownUntil, "no unmarked batch after a marked one");
            else {
                if (knownUntil == null) knownUntil = from;
                assertEquals(knownUntil, from, "the time known when the first switch left early, on every batch after");
                markedBatches++;
            }
        }
        assertNotNull(knownUntil, "batches after the merge let switches out early are marked");
        assertTrue(markedBatches < batches.size(), "what left before is not marked");

        List<TestRecord<String, ThreadStats>> rows = aggregateRows(session, batches, sessions);
        int complete = 0;
        int marked = 0;
        for (TestRecord<String, ThreadStats> r : rows) {
            ThreadStats t = r.value();
            if (!t.getFinal$()) continue;
            if (r.key().split("/").length == 2) {
                assertFalse(t.getComplete(), r.key());
                continue;
            }
            if (t.getComplete()) {
                assertEquals(truth.get(r.key()), t, r.key());
                complete++;
            } else {
                marked++;
            }
        }
        assertTrue(complete > 0 && marked > 0, complete + " complete window rows, " + marked + " marked");
    }

    /** The aggregate topology's output for {@code batches} and the session's records {@code sessions}. */
    private List<TestRecord<String, ThreadStats>> aggregateRows(String session, List<TestRecord<String, SwitchBatch>> batches,
                                                                List<TraceSession> sessions) {
        try (TopologyTestDriver aggregate = aggregate()) {
            var batchesIn = aggregate.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = aggregate.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            for (TestRecord<String, SwitchBatch> b : batches) batchesIn.pipeInput(b);
            for (TraceSession s : sessions) sessionsIn.pipeInput(session, s);
            return aggregate.createOutputTopic("etw.thread-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ThreadStats.class))
                    .readRecordsToList();
        }
    }

    /** A 40,000-switch trace written to {@code f}, and its window rows by key as the whole file gives them offline. */
    record Whole(String session, Map<String, ThreadStats> rows) {}

    static Whole whole(Path f) throws Exception {
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(40_000), 0x28);
        SessionStatistics whole = new SessionStatistics(WINDOW);
        String session = SessionDecoder.decodeBatches(f, "h", null, whole::accept, null).session().session();
        whole.closeAll();
        Map<String, ThreadStats> truth = new HashMap<>();
        for (ThreadStats t : whole.windowed()) truth.put(ThreadStatsFields.key(session, t.getThreadId(), t.getWindowStartNanos()), t);
        return new Whole(session, truth);
    }

    /** The row without its thread's names and mark: its numbers. */
    static ThreadStats unlabelled(ThreadStats t) {
        assertNotNull(t, "the whole file has the row");
        return ThreadStats.newBuilder(t).setProcessId(null).setProcessName(null).setThreadName(null).setComplete(true).build();
    }

    static <V> Map<String, V> byKey(List<V> rows, java.util.function.Function<V, String> key) {
        Map<String, V> m = new TreeMap<>();
        for (V v : rows) m.put(key.apply(v), v);
        return m;
    }

    /** Each key's last row, as it would be at revision 0 (every host was there, so no revision comes). */
    static <V> Map<String, V> latest(List<KeyValue<String, V>> out) {
        Map<String, V> m = new TreeMap<>();
        for (KeyValue<String, V> kv : out) m.put(kv.key, kv.value);
        return m;
    }

    static TestRecord<String, byte[]> raw(String session, byte[] value, long index, String endError) {
        RecordHeaders h = new RecordHeaders();
        h.add(SwapstreamConfig.HEADER_HOST, "h".getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_BUFFER_INDEX, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
        if (endError != null) {
            h.add(SwapstreamConfig.HEADER_END_OF_SESSION, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
            h.add(SwapstreamConfig.HEADER_INGEST_DEAD_LETTERS, "1".getBytes(StandardCharsets.UTF_8));
            h.add(SwapstreamConfig.HEADER_INGEST_ERROR, endError.getBytes(StandardCharsets.UTF_8));
        }
        return new TestRecord<>(session, value, h);
    }

    private Properties props(String name) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "incomplete-" + name);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(name).toString());
        return p;
    }

    private TopologyTestDriver decode() {
        StreamsBuilder b = new StreamsBuilder();
        DecodeTopology.build(b, DecodeSettings.from(Map.of()));
        return new TopologyTestDriver(b.build(), props("decode"));
    }

    private TopologyTestDriver aggregate() {
        StreamsBuilder b = new StreamsBuilder();
        AggregateTopology.build(b, AggregateSettings.from(Map.of(SwapstreamConfig.AGGREGATE_WINDOW_NANOS, String.valueOf(WINDOW))),
                new RowIndexes());
        return new TopologyTestDriver(b.build(), props("aggregate"));
    }

    private TopologyTestDriver rollup() {
        StreamsBuilder b = new StreamsBuilder();
        RollupTopology.build(b, RollupSettings.from(Map.of(SwapstreamConfig.ROLLUP_GRACE_MS, "120000")), null);
        return new TopologyTestDriver(b.build(), props("rollup"));
    }
}
