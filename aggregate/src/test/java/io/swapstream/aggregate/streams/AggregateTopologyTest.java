package io.swapstream.aggregate.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.RowIndex;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import io.swapstream.stage.StageSensors;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AggregateTopologyTest {
    @TempDir Path dir;

    /** The aggregate topology on the test driver, its state in {@code stateDir} under the test's folder. */
    private TopologyTestDriver driver(String stateDir, Map<String, String> config, long windowNanos, long emitIntervalMs) {
        return driver(stateDir, config, windowNanos, emitIntervalMs, new RowIndexes());
    }

    private TopologyTestDriver driver(String stateDir, Map<String, String> config, long windowNanos, long emitIntervalMs,
                                      RowIndexes indexes) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "aggregate-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(stateDir).toString());
        StreamsBuilder b = new StreamsBuilder();
        Map<String, String> c = new java.util.HashMap<>(config);
        c.put(io.swapstream.schemas.SwapstreamConfig.AGGREGATE_WINDOW_NANOS, String.valueOf(windowNanos));
        c.put(io.swapstream.schemas.SwapstreamConfig.AGGREGATE_EMIT_INTERVAL_MS, String.valueOf(emitIntervalMs));
        AggregateTopology.build(b, AggregateSettings.from(c), indexes);
        return new TopologyTestDriver(b.build(), p);
    }

    /**
     * A session's batches (carrying its thread records) and end record through the aggregate on the test driver:
     * every window comes out once, final, as soon as the switches pass it; whole-session rows end
     * final; every final row equals the offline statistics; the session's state is gone after.
     */
    @Test
    void windowsCloseOnceAndTheEndedSessionEqualsTheOfflineStatistics() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(5000).withMode("cswitch").withPmc(1), 0x28);
        long window = 100_000_000L;
        List<SwitchBatch> batches = new ArrayList<>();
        List<ThreadLabel> threads = new ArrayList<>();
        SessionStatistics offline = new SessionStatistics(window);
        SessionStatistics offlineWhole = new SessionStatistics(0);
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SessionDecoder d = SessionDecoder.decodeBatches(f, "h", null, b -> {
            batches.add(serde.deserialize("t", serde.serialize("t", b)));
            offline.accept(b);
            offlineWhole.accept(b);
        }, threads::add);
        String session = d.session().session();
        try (TopologyTestDriver driver = driver("state", Map.of(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS, "2"),
                window, 60_000)) {
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            var out = driver.createOutputTopic("etw.thread-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ThreadStats.class));
            var edgesOut = driver.createOutputTopic("etw.wake-edges", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.WakeEdge.class));
            long switches = 0;
            long lastWindowEnd = Long.MIN_VALUE;
            Map<String, ThreadStats> windowRows = new HashMap<>();
            for (SwitchBatch s : batches) {
                batchesIn.pipeInput(session, s);
                switches += s.count();
                // the rows so far: windows that ended before this batch's last switch are out, final
                if (s.count() == 0) continue;
                long passed = Math.floorDiv(s.timeNanos(s.count() - 1), window) * window;
                for (TestRecord<String, ThreadStats> r : out.readRecordsToList()) {
                    ThreadStats t = r.value();
                    assertTrue(t.getFinal$(), "a window is emitted only final: " + r.key());
                    assertTrue(t.getWindowEndNanos() <= passed, r.key());
                    assertEquals(null, windowRows.put(r.key(), t), "each window once: " + r.key());
                    lastWindowEnd = Math.max(lastWindowEnd, t.getWindowEndNanos());
                }
            }
            assertTrue(lastWindowEnd > Long.MIN_VALUE, "windows closed while the session ran");
            sessionsIn.pipeInput(session, AvroRecords.of(d.session()).setComplete(true).setEndReason("end-marker")
                    .setSwitchCount(switches).setThreadRecords(threads.size()).build());
            List<TestRecord<String, ThreadStats>> tail = out.readRecordsToList();
            Map<String, ThreadStats> rows = new HashMap<>();
            for (TestRecord<String, ThreadStats> r : tail) {
                assertTrue(r.value().getFinal$(), r.key());
                boolean windowed = r.key().split("/").length == 3;
                assertEquals(null, (windowed ? windowRows : rows).put(r.key(), r.value()), "each row once: " + r.key());
            }
            for (ThreadStats t : offlineWhole.wholeSession()) assertEquals(t, rows.get(session + "/" + t.getThreadId()));
            List<ThreadStats> windows = offline.windowed();
            Map<String, ThreadStats> latest = new HashMap<>();
            driver.getKeyValueStore(AggregateTopology.STATS_STORE).all().forEachRemaining(kv -> latest.put((String) kv.key, (ThreadStats) kv.value));
            long lastStart = windows.stream().mapToLong(ThreadStats::getWindowStartNanos).max().orElseThrow();
            int kept = 0;
            for (ThreadStats t : windows) {
                String key = AggregateTopology.windowRowKey(session, t.getWindowStartNanos(), t.getThreadId());
                assertEquals(t, windowRows.get(session + "/" + t.getThreadId() + "/" + t.getWindowStartNanos()));
                // the store keeps the whole-session rows and the last windows (here 2), not the history
                if (t.getWindowStartNanos() > lastStart - 2 * window) {
                    // the store keeps the row for queries; its sketches go to the topic only
                    assertEquals(withoutSketches(t), latest.get(key));
                    kept++;
                } else {
                    assertEquals(null, latest.get(key), key);
                }
            }
            assertEquals(windows.size(), windowRows.size());
            assertTrue(kept < windows.size(), "older windows left the store");
            // each closed window's wake edges, once, as offline has them, keyed waker/woken/window
            Map<String, io.swapstream.schemas.avro.WakeEdge> edges = new HashMap<>();
            for (var r : edgesOut.readRecordsToList()) assertEquals(null, edges.put(r.key(), r.value()), "each edge once: " + r.key());
            Map<String, io.swapstream.schemas.avro.WakeEdge> offlineEdges = new HashMap<>();
            for (var e : offline.wakeEdges()) offlineEdges.put(e.getWakerProcess() + "/" + e.getWokenProcess() + "/" + e.getWindowStartNanos() + "/" + session, e);
            assertTrue(offlineEdges.size() > 20, offlineEdges.size() + " edges");
            assertEquals(offlineEdges, edges);
            assertEquals(offlineWhole.wholeSession().size() + kept, latest.size());
            assertEquals(switches, AggregateTopology.finishedSwitches((byte[]) driver.getKeyValueStore(AggregateTopology.SESSIONS_STORE).get(session)));
            assertFalse(driver.getKeyValueStore(AggregateTopology.ACCUMULATORS_STORE).all().hasNext(), "no accumulator is left");
            assertFalse(driver.getKeyValueStore(AggregateTopology.REDO_STORE).all().hasNext(), "no redo entry is left");
            // the labels stay for the query API, which names each row's readiers by them (until the session's retention)
            var labels = driver.<String, io.swapstream.schemas.avro.ThreadInfo>getKeyValueStore(AggregateTopology.THREADS_STORE);
            Map<Integer, String> named = new HashMap<>();
            for (ThreadLabel t : threads) if (t.processName() != null) named.put(t.threadId(), t.processName());
            int readiers = 0;
            for (ThreadStats t : rows.values()) {
                for (CharSequence readier : t.getTopReadiers().keySet()) {
                    String name = named.get(Integer.parseInt(readier.toString()));
                    if (name == null) continue;
                    var label = labels.get(session + "/" + readier);
                    assertTrue(label != null && name.equals(String.valueOf(label.getProcessName())), "readier " + readier + " named after the end");
                    readiers++;
                }
            }
            assertTrue(readiers > 0, "rows with named readiers");
        }
    }

    /**
     * Whole-session rows of a running session, emitted as they change, with the accumulators written after
     * every batch: each row equals the offline statistics of the windows closed so far (the open window's switches
     * join them when it closes), though those wait in the store. With windows they go to the query store alone (the
     * topic's window rows add up to them); without, to the topic too.
     */
    @ParameterizedTest
    @ValueSource(longs = {50_000_000L, 0L})
    void rowsOfARunningSessionEqualTheOfflineStatisticsSoFarWhileClosedWindowsWaitInTheStore(long window) throws Exception {
        Path f = dir.resolve("r.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(20_000).withMode("cswitch"), 0x31);
        List<SwitchBatch> batches = new ArrayList<>();
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SessionDecoder d = SessionDecoder.decodeBatches(f, "h", null, b -> batches.add(serde.deserialize("t", serde.serialize("t", b))), t -> {});
        String session = d.session().session();
        SessionStatistics offline = new SessionStatistics(window);
        int changedRows = 0;
        int windowRows = 0;
        try (TopologyTestDriver driver = driver("state-emit-" + window,
                // a write after every batch; windows longer than the write span: whole-session accumulators leave memory at each
                Map.of(SwapstreamConfig.AGGREGATE_FLUSH_BATCHES, "1", SwapstreamConfig.AGGREGATE_FLUSH_TRACE_MS, "1"), window, 1_000)) {
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var out = driver.createOutputTopic("etw.thread-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ThreadStats.class));
            KeyValueStore<String, ThreadStats> store = driver.getKeyValueStore(AggregateTopology.STATS_STORE);
            Map<Integer, ThreadStats> emitted = new HashMap<>();
            for (int i = 0; i < batches.size(); i++) {
                batchesIn.pipeInput(session, batches.get(i));
                offline.accept(batches.get(i));
                // rows go out every third batch: a window can close, and its threads stop running, between two
                if (i % 3 != 2) continue;
                driver.advanceWallClockTime(java.time.Duration.ofSeconds(1));
                Map<Integer, ThreadStats> sofar = new HashMap<>();
                for (ThreadStats t : offline.wholeSessionSoFar()) sofar.put(t.getThreadId(), ThreadStats.newBuilder(t).setFinal$(false).build());
                for (TestRecord<String, ThreadStats> r : out.readRecordsToList()) {
                    if (r.key().split("/").length == 3) {
                        windowRows++;
                        continue;
                    }
                    assertEquals(0, window, "with windows, a running session's whole-session row went to the topic: " + r.key());
                    ThreadStats t = r.value();
                    assertEquals(sofar.get(t.getThreadId()), t, r.key() + " after batch " + i);
                    emitted.put(t.getThreadId(), t);
                    changedRows++;
                }
                if (window > 0) {
                    for (ThreadStats t : sofar.values()) {
                        ThreadStats kept = store.get(session + "/" + t.getThreadId());
                        assertEquals(withoutSketches(t), kept, "the store's row of thread " + t.getThreadId() + " after batch " + i);
                        if (!kept.equals(emitted.put(t.getThreadId(), kept))) changedRows++;
                    }
                    sofar.replaceAll((tid, t) -> withoutSketches(t));
                }
                // and every thread whose row changed since it last went out has gone out again
                assertEquals(sofar, emitted, "after batch " + i);
            }
        }
        assertTrue(batches.size() >= 4, "batches: " + batches.size());
        assertTrue(window == 0 || windowRows > 0, "windows closed while the session ran");
        assertTrue(changedRows > offline.wholeSession().size(), "rows went out as they changed: " + changedRows);
    }

    /**
     * Memory follows the threads that run, not every thread a long session has started: at each write (the first window
     * close a write span of trace time after the last) whole-session accumulators leave memory, those of threads that
     * did not run since the write before where windows are shorter than the span, all of them where they are not; the
     * session's final rows still equal the offline statistics.
     */
    @ParameterizedTest
    @CsvSource({"20, 100", "50, 50"})
    void accumulatorsOfThreadsThatStoppedLeaveMemoryWithinTwoWriteSpans(long windowMs, long spanMs) throws Exception {
        Path f = dir.resolve("churn.etl");
        // threads exit and new ones start: a quarter of them under a TID never seen before
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(40_000).withMode("cswitch").withExitRate(0.05), 0x31);
        long window = windowMs * 1_000_000L;
        long span = spanMs * 1_000_000L;
        List<SwitchBatch> batches = new ArrayList<>();
        List<ThreadLabel> threads = new ArrayList<>();
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SessionDecoder d = SessionDecoder.decodeBatches(f, "h", null, b -> batches.add(serde.deserialize("t", serde.serialize("t", b))),
                threads::add);
        String session = d.session().session();
        SessionStatistics offline = new SessionStatistics(0);
        // a thread whose accumulator is in memory ran within two spans and the windows around them
        long recent = 2 * span + 3 * window;
        List<IntOpenHashSet> ran = new ArrayList<>();
        IntOpenHashSet seen = new IntOpenHashSet();
        double most = 0;
        try (TopologyTestDriver driver = driver("state-churn-" + windowMs, Map.of(SwapstreamConfig.AGGREGATE_FLUSH_TRACE_MS, String.valueOf(span / 1_000_000)),
                window, 1_000)) {
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            var out = driver.createOutputTopic("etw.thread-stats", new StringDeserializer(), new SingleObjectAvroSerde<>(ThreadStats.class));
            long switches = 0;
            for (int i = 0; i < batches.size(); i++) {
                SwitchBatch b = batches.get(i);
                batchesIn.pipeInput(session, b);
                offline.accept(b);
                switches += b.count();
                IntOpenHashSet tids = new IntOpenHashSet();
                for (int k = 0; k < b.count(); k++) {
                    tids.add(b.oldThreadId(k));
                    tids.add(b.newThreadId(k));
                }
                ran.add(tids);
                seen.addAll(tids);
                if (b.count() == 0) continue;
                // the emission interval passes: the gauge is the open sessions' accumulators now
                driver.advanceWallClockTime(java.time.Duration.ofSeconds(1));
                long newest = b.timeNanos(b.count() - 1);
                // the batches with a switch in the recent span, and the one before them (it may run into it)
                IntOpenHashSet recentThreads = new IntOpenHashSet();
                int j = i;
                while (j > 0 && (batches.get(j).count() == 0 || batches.get(j).timeNanos(batches.get(j).count() - 1) >= newest - recent)) j--;
                for (int k = j; k <= i; k++) recentThreads.addAll(ran.get(k));
                double inMemory = taskMetric(driver, StageSensors.ACCUMULATORS_IN_MEMORY);
                // a whole-session accumulator and an open window's each
                assertTrue(inMemory <= 2 * recentThreads.size(),
                        "after batch " + i + ": " + inMemory + " accumulators in memory, " + recentThreads.size() + " threads ran recently");
                most = Math.max(most, inMemory);
            }
            sessionsIn.pipeInput(session, AvroRecords.of(d.session()).setComplete(true).setEndReason("end-marker")
                    .setSwitchCount(switches).setThreadRecords(threads.size()).build());
            Map<String, ThreadStats> finals = new HashMap<>();
            for (TestRecord<String, ThreadStats> r : out.readRecordsToList()) {
                if (r.key().split("/").length == 2 && r.value().getFinal$()) finals.put(r.key(), r.value());
            }
            for (ThreadStats t : offline.wholeSession()) assertEquals(t, finals.get(session + "/" + t.getThreadId()), "thread " + t.getThreadId());
            assertEquals(offline.wholeSession().size(), finals.size());
        }
        // what the test is about: more threads than memory held accumulators for at once, whole-session and window's together
        assertTrue(most < seen.size(), seen.size() + " threads in the session, at most " + most + " accumulators in memory");
    }

    /**
     * A service takes sessions for ever: an ended session's progress, record and rows leave the stores
     * once its retention has passed since it ended, and not before; a session that ended later stays.
     */
    @Test
    void endedSessionsLeaveTheStoresOnceTheirRetentionHasPassed() throws Exception {
        Path f = dir.resolve("k.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        long retentionMs = 60_000;
        try (TopologyTestDriver driver = driver("state-retention", Map.of(SwapstreamConfig.SESSION_RETENTION_MS, String.valueOf(retentionMs)), 100_000_000L, 60_000)) {
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            String first = feed(f, "first", batchesIn, sessionsIn);
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(30));
            String second = feed(f, "second", batchesIn, sessionsIn);
            int firstRows = rows(driver, first);
            int secondRows = rows(driver, second);
            assertTrue(firstRows > 0 && secondRows > 0, firstRows + " and " + secondRows + " rows");
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(25));
            assertEquals(firstRows, rows(driver, first), "55 s after its end, before its retention");
            assertTrue(known(driver, first));
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(10));
            assertEquals(0, rows(driver, first), "65 s after its end");
            assertFalse(known(driver, first));
            assertEquals(secondRows, rows(driver, second), "35 s after its end");
            assertTrue(known(driver, second));
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(30));
            assertFalse(known(driver, second));
            assertFalse(driver.getKeyValueStore(AggregateTopology.STATS_STORE).all().hasNext(), "no row is left");
            assertFalse(driver.getKeyValueStore(AggregateTopology.SESSIONS_STORE).all().hasNext(), "no progress is left");
            assertFalse(driver.getKeyValueStore(AggregateTopology.THREADS_STORE).all().hasNext(), "no label is left");
            assertEquals(2.0, taskMetric(driver, StageSensors.SESSIONS_FORGOTTEN + "-total"), "counted in the task's own metric");
        }
    }

    /**
     * Two hosts with the same switches, and one of them processed again by another application (a second run on
     * the topics, a reset): a reader taking the latest record of each key of etw.wake-edges, as readers are told,
     * and merging an edge's keys gets each host's edges once, twice the one host's: reprocessing adds nothing.
     */
    @Test
    void wakeEdgesTakenLatestPerKeyCountEachSessionOnceWhenASessionIsProcessedAgain() throws Exception {
        Path f = dir.resolve("w.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        long window = 100_000_000L;
        Map<String, io.swapstream.schemas.avro.WakeEdge> latest = new HashMap<>();
        for (List<String> hosts : List.of(List.of("h1", "h2"), List.of("h1"))) {
            try (TopologyTestDriver driver = driver("state-edges-" + hosts.size(), Map.of(), window, 60_000)) {
                var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
                var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
                var edgesOut = driver.createOutputTopic("etw.wake-edges", new StringDeserializer(),
                        new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.WakeEdge.class));
                for (String host : hosts) feed(f, host, batchesIn, sessionsIn);
                for (var r : edgesOut.readRecordsToList()) latest.put(r.key(), r.value());
            }
        }
        SessionStatistics offline = new SessionStatistics(window);
        SessionDecoder.decodeBatches(f, "h1", null, offline::accept, null);
        Map<String, Long> expected = new HashMap<>();
        for (var e : offline.wakeEdges()) expected.merge(e.getWakerProcess() + "/" + e.getWokenProcess() + "/" + e.getWindowStartNanos(), 2 * e.getWakeCount(), Long::sum);
        Map<String, Long> merged = new HashMap<>();
        for (var e : latest.values()) merged.merge(e.getWakerProcess() + "/" + e.getWokenProcess() + "/" + e.getWindowStartNanos(), e.getWakeCount(), Long::sum);
        assertTrue(expected.size() > 10, expected.size() + " edges");
        assertEquals(expected, merged);
    }

    /**
     * Several sessions' rows through the stage's own code: the index it keeps as it emits answers every top N
     * as a full sort of its stats store does, for several fields and each kind of rows.
     */
    @Test
    void theRowIndexAnswersAsAFullSortOfTheStatsStore() throws Exception {
        Path f = dir.resolve("q.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(4000).withMode("cswitch"), 0x28);
        Path g = dir.resolve("r.etl");
        TraceGenerator.generate(g, GeneratorOptions.defaults().withSwitches(3000).withSeed(5), 0x28);
        Map<String, String> config = Map.of(SwapstreamConfig.AGGREGATE_KEEP_WINDOWS, "3");
        List<String> sessions = new ArrayList<>();
        RowIndexes indexes = new RowIndexes();
        try (TopologyTestDriver driver = driver("state-index", config, 50_000_000L, 60_000, indexes)) {
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            for (int i = 0; i < 3; i++) sessions.add(feed(i % 2 == 0 ? f : g, "host" + i, batchesIn, sessionsIn));
            Map<String, ThreadStats> store = new HashMap<>();
            driver.getKeyValueStore(AggregateTopology.STATS_STORE).all().forEachRemaining(kv -> store.put((String) kv.key, (ThreadStats) kv.value));
            assertEquals(store.size(), indexes.rows(), "every row of the store indexed");
            for (String by : List.of("waitP99Nanos", "readySumNanos", "switchInCount", "priorityMax")) {
                for (RowIndex.Rows kind : RowIndex.Rows.values()) {
                    for (String session : new String[] {null, sessions.get(1)}) {
                        List<String> expected = fullSort(store, by, session, kind).stream().limit(25).toList();
                        List<String> got = indexes.top(by, 25, session, kind).stream().map(RowIndex.Hit::storeKey).toList();
                        assertFalse(expected.isEmpty(), by + " " + kind + " " + session);
                        assertEquals(expected, got, by + " " + kind + " " + session);
                    }
                }
            }
        }
    }

    /** The row as the query store keeps it: no sketch. */
    static ThreadStats withoutSketches(ThreadStats t) {
        return ThreadStats.newBuilder(t).setWaitSketch(null).setReadySketch(null).setRunSketch(null)
                .setReadyIdleWakeSketch(null).setReadyContendedSketch(null).build();
    }

    /** The stats store's keys in top-N order, by brute force. */
    static List<String> fullSort(Map<String, ThreadStats> store, String by, String session, RowIndex.Rows kind) {
        // the latest window: of the session asked for, or of all; every thread's row in it
        long latest = Long.MIN_VALUE;
        for (Map.Entry<String, ThreadStats> e : store.entrySet()) {
            ThreadStats t = e.getValue();
            if ((session == null || t.getSession().toString().equals(session)) && e.getKey().startsWith(t.getSession() + "/w/")) {
                latest = Math.max(latest, t.getWindowStartNanos());
            }
        }
        List<Map.Entry<String, ThreadStats>> rows = new ArrayList<>();
        for (Map.Entry<String, ThreadStats> e : store.entrySet()) {
            ThreadStats t = e.getValue();
            if (session != null && !t.getSession().toString().equals(session)) continue;
            boolean window = e.getKey().startsWith(t.getSession() + "/w/");
            if (kind == RowIndex.Rows.WHOLE && !window || kind == RowIndex.Rows.ALL && window) rows.add(e);
            if (kind == RowIndex.Rows.LATEST && window && t.getWindowStartNanos() == latest) rows.add(e);
        }
        rows.sort(java.util.Comparator.comparingDouble((Map.Entry<String, ThreadStats> e) -> -ThreadStatsFields.sortValue(e.getValue(), by))
                .thenComparing(e -> e.getValue().getSession().toString()).thenComparingInt(e -> e.getValue().getThreadId())
                .thenComparingLong(e -> e.getKey().startsWith(e.getValue().getSession() + "/w/") ? e.getValue().getWindowStartNanos() : Long.MIN_VALUE));
        return rows.stream().map(Map.Entry::getKey).toList();
    }

    /** The value of the stage's metric {@code name} for the driver's one task. */
    static double taskMetric(TopologyTestDriver driver, String name) {
        return driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals(StageSensors.GROUP) && e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    /** A record that cannot be read is skipped with its reason: the session it names, and every other, goes on. */
    @Test
    void aBatchThatCannotBeReadIsSkippedAndTheStageGoesOn() throws Exception {
        Path f = dir.resolve("g.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(2000).withMode("cswitch"), 0x28);
        String session = SessionDecoder.decodeBatches(f, "h", null, b -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state-garbage", Map.of(), 100_000_000L, 60_000)) {
            var raw = driver.createInputTopic("etw.switch-batches", new StringSerializer(),
                    new org.apache.kafka.common.serialization.ByteArraySerializer());
            raw.pipeInput(session, "not a batch".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            raw.pipeInput(null, new byte[] {1, 2, 3});
            raw.pipeInput("other:log:1", new byte[] {(byte) 0xC3, 1, 0, 0, 0, 0, 0, 0, 0, 0});
            var batchesIn = driver.createInputTopic("etw.switch-batches", new StringSerializer(), new SwitchBatchSerde());
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            assertEquals(session, feed(f, "h", batchesIn, sessionsIn));
            assertTrue(rows(driver, session) > 0);
            assertTrue(AggregateTopology.finishedSwitches(
                    (byte[]) driver.getKeyValueStore(AggregateTopology.SESSIONS_STORE).get(session)) > 0, "the session finished");
        }
    }

    /** One session of the trace, as host {@code host}, through the aggregate to its end; its id. */
    private static String feed(Path f, String host, org.apache.kafka.streams.TestInputTopic<String, SwitchBatch> batchesIn,
                               org.apache.kafka.streams.TestInputTopic<String, TraceSession> sessionsIn) throws Exception {
        List<SwitchBatch> batches = new ArrayList<>();
        List<ThreadLabel> threads = new ArrayList<>();
        SwitchBatchSerde serde = new SwitchBatchSerde();
        // the decoder reuses its batch: each is kept as a copy
        SessionDecoder d = SessionDecoder.decodeBatches(f, host, null, b -> batches.add(serde.deserialize("t", serde.serialize("t", b))),
                threads::add);
        String session = d.session().session();
        long switches = 0;
        for (SwitchBatch b : batches) {
            batchesIn.pipeInput(session, b);
            switches += b.count();
        }
        sessionsIn.pipeInput(session, AvroRecords.of(d.session()).setComplete(true).setEndReason("end-marker")
                .setSwitchCount(switches).setThreadRecords(threads.size()).build());
        return session;
    }

    private static int rows(TopologyTestDriver driver, String session) {
        int n = 0;
        try (var it = driver.getKeyValueStore(AggregateTopology.STATS_STORE).all()) {
            while (it.hasNext()) if (((String) it.next().key).startsWith(session + "/")) n++;
        }
        return n;
    }

    /** Whether the stores still hold the session's progress or record. */
    private static boolean known(TopologyTestDriver driver, String session) {
        boolean progress = driver.getKeyValueStore(AggregateTopology.SESSIONS_STORE).get(session) != null;
        boolean record = driver.getKeyValueStore(AggregateTopology.SESSION_RECORDS_STORE).get(session) != null;
        assertEquals(progress, record, "progress and record of " + session + " go together");
        return progress;
    }

    @Test
    void accumulatorCodecRoundTrips() {
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.switchIn(10, 500L, 2L);
        a.switchIn(20, 70_000L, ThreadStatsAccumulator.NONE);
        a.switchOut(30, 5, 15, 9, 123L);
        a.switchOut(40, 1, -1, 12, ThreadStatsAccumulator.NONE);
        a.pmc(new long[] {7, 8}, 2);
        ThreadStatsAccumulator b = AccumulatorCodec.decode(AccumulatorCodec.encode(a));
        assertEquals(a.toStats("s", "h", 1, 2, "p", "t", 0, 1, false), b.toStats("s", "h", 1, 2, "p", "t", 0, 1, false));
        ThreadStatsAccumulator empty = AccumulatorCodec.decode(AccumulatorCodec.encode(new ThreadStatsAccumulator()));
        assertEquals(new ThreadStatsAccumulator().toStats("s", "h", 1, null, null, null, 0, 1, true),
                empty.toStats("s", "h", 1, null, null, null, 0, 1, true));
    }

    @Test
    void windowRowKeysAreTheSessionThenTheStartInTwentyDigits() {
        assertEquals("s/w/00000000000000000000/", AggregateTopology.windowRowPrefix("s", 0));
        assertEquals("h:1/w/01700000000000000000/", AggregateTopology.windowRowPrefix("h:1", 1_700_000_000_000_000_000L));
        assertEquals("s/w/09223372036854775807/7", AggregateTopology.windowRowKey("s", Long.MAX_VALUE, 7));
        assertEquals("s/w/-0000000000000000060/", AggregateTopology.windowRowPrefix("s", -60));
    }
}
