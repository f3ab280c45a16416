package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.inspect.FileInventory;
import io.swapstream.etw.BufferFiller;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The pipeline end to end on a real broker; each test has its own topic prefix, application id and state. */
@ExtendWith(KafkaBroker.class)
class PipelineIT {
    @TempDir Path dir;
    final String prefix = "it" + UUID.randomUUID().toString().substring(0, 6) + ".";

    Pipeline start(KafkaBroker.Bootstrap kafka) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 2, (short) 1);
        }
        return Pipeline.start(kafka.servers(), "it-" + prefix, dir.resolve("state"), prefix, 2, (short) 1, 0, 200,
                Map.of("commit.interval.ms", "100"));
    }

    BufferPublisher.Published publish(KafkaBroker.Bootstrap kafka, Path file, String host) throws Exception {
        try (BufferPublisher p = new BufferPublisher(kafka.servers(), prefix, Map.of())) {
            return p.publish(file, host, null, null);
        }
    }

    /** Reads committed records of a topic until {@code done} says enough. */
    List<ConsumerRecord<String, byte[]>> read(KafkaBroker.Bootstrap kafka, String suffix,
                                              Predicate<List<ConsumerRecord<String, byte[]>>> done) {
        return read(kafka.servers(), prefix + suffix, done);
    }

    /** Reads committed records of {@code topic} from the start until {@code done} says enough. */
    static List<ConsumerRecord<String, byte[]>> read(String bootstrap, String topic,
                                                     Predicate<List<ConsumerRecord<String, byte[]>>> done) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "it-reader-" + UUID.randomUUID());
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (!done.test(out)) {
                if (System.nanoTime() > deadline) throw new AssertionError("timed out reading " + topic + " after " + out.size() + " records");
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    static final SwitchBatchSerde BATCHES = new SwitchBatchSerde();
    static final SingleObjectAvroSerde<io.swapstream.schemas.avro.WakeEdge> WAKE_EDGES =
            new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.WakeEdge.class);
    static final SingleObjectAvroSerde<io.swapstream.schemas.avro.ThreadStats> STATS =
            new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ThreadStats.class);
    static final SingleObjectAvroSerde<TraceSession> SESSIONS = new SingleObjectAvroSerde<>(TraceSession.class);

    /** Switches in batch records. */
    static long rows(List<ConsumerRecord<String, byte[]>> batches) {
        long n = 0;
        for (ConsumerRecord<String, byte[]> r : batches) n += BATCHES.deserialize("t", r.value()).count();
        return n;
    }

    /** The record that ended each of {@code sessions}. */
    Map<String, TraceSession> completed(KafkaBroker.Bootstrap kafka, List<String> sessions) {
        Map<String, TraceSession> done = new HashMap<>();
        read(kafka, SwapstreamConfig.SESSIONS, rs -> {
            for (ConsumerRecord<String, byte[]> r : rs) {
                TraceSession s = SESSIONS.deserialize("t", r.value());
                if (s.getEndReason() != null) done.put(r.key(), s);
            }
            return done.keySet().containsAll(sessions);
        });
        return done;
    }

    @Test
    void bothEncodingsOnABrokerEqualTheOfflineCommands(KafkaBroker.Bootstrap kafka) throws Exception {
        Path cs = dir.resolve("cs.etl");
        Path cc = dir.resolve("cc.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(15_000).withSeed(11);
        TraceGenerator.generate(cs, o.withMode("cswitch").withPmc(2), MaximumWaitReason.forBuild(o.build()));
        TraceGenerator.generate(cc, o.withMode("compact"), MaximumWaitReason.forBuild(o.build()));
        // the compact trace is written as the kernel writes it: batches after newer events of their processor
        assertTrue(FileInventory.of(cc, null).batchesAfterNewerEvents() > 0);
        try (Pipeline p = start(kafka)) {
            String s1 = publish(kafka, cs, "web01").session();
            String s2 = publish(kafka, cc, "web02").session();
            Map<String, TraceSession> done = completed(kafka, List.of(s1, s2));
            assertTrue(done.get(s1).getComplete() && done.get(s2).getComplete());
            assertEquals(0, done.get(s1).getDeadLetters() + done.get(s2).getDeadLetters());
            long total = done.get(s1).getSwitchCount() + done.get(s2).getSwitchCount();
            List<ConsumerRecord<String, byte[]>> switches = read(kafka, SwapstreamConfig.SWITCH_BATCHES, rs -> rows(rs) >= total);
            for (Map.Entry<String, Path> e : Map.of(s1, cs, s2, cc).entrySet()) {
                String host = e.getKey().substring(0, e.getKey().indexOf(':'));
                List<SwitchRow> offline = new ArrayList<>();
                SessionStatistics stats = new SessionStatistics(0);
                SessionDecoder d = SessionDecoder.decodeBatches(e.getValue(), host, null, b -> { offline.addAll(b.rows()); stats.accept(b); }, null);
                List<SwitchRow> online = switches.stream().filter(r -> r.key().equals(e.getKey()))
                        .flatMap(r -> BATCHES.deserialize("t", r.value()).rows().stream()).toList();
                assertEquals(offline, online, "switches of " + e.getKey());
                for (int i = 1; i < online.size(); i++) assertTrue(online.get(i - 1).timestamp() <= online.get(i).timestamp());
                assertEquals(0, d.counters().switchesOutOfOrder + d.counters().lateEvents);
                List<ThreadStats> expected = stats.wholeSession();
                Map<String, ThreadStats> latest = new HashMap<>();
                read(kafka, SwapstreamConfig.THREAD_STATS, rs -> {
                    latest.clear();
                    for (ConsumerRecord<String, byte[]> r : rs) {
                        if (r.key().startsWith(e.getKey() + "/")) latest.put(r.key(), STATS.deserialize("t", r.value()));
                    }
                    return latest.size() >= expected.size()
                            && expected.stream().allMatch(t -> t.equals(latest.get(e.getKey() + "/" + t.getThreadId())));
                });
                for (ThreadStats t : expected) assertEquals(t, latest.get(e.getKey() + "/" + t.getThreadId()));
                assertEquals(offline.size(), done.get(e.getKey()).getSwitchCount());
                // who woke whom: etw.wake-edges holds the session's edges as stats --group wakes prints them (no window here)
                List<String> printed = CliRunner.run("stats", "--group", "wakes", "--window", "0s", "--host", host, e.getValue().toString())
                        .out().lines().toList();
                assertTrue(printed.size() > 10, printed.size() + " edges");
                List<String> topic = new ArrayList<>();
                read(kafka, SwapstreamConfig.WAKE_EDGES, rs -> {
                    topic.clear();
                    for (ConsumerRecord<String, byte[]> r : rs) {
                        io.swapstream.schemas.avro.WakeEdge w = WAKE_EDGES.deserialize("t", r.value());
                        if (!w.getSession().toString().equals(e.getKey())) continue;
                        assertEquals(w.getWakerProcess() + "/" + w.getWokenProcess() + "/" + w.getWindowStartNanos() + "/" + w.getSession(), r.key());
                        w.setWaitSketch(null);
                        w.setReadySketch(null);
                        topic.add(io.swapstream.schemas.json.RecordJson.toJson(w));
                    }
                    return topic.size() >= printed.size();
                });
                assertEquals(new java.util.HashSet<>(printed), new java.util.HashSet<>(topic));
                assertEquals(printed.size(), topic.size());
            }
            // every field of WMI_CONTEXTSWAP, in tail's rows of the CSwitch trace
            CliRunner rows = CliRunner.run("tail", "switch-batches", "--from-beginning", "--rows", "-b", kafka.servers(), "--topic-prefix", prefix);
            assertEquals(0, rows.exit(), rows.err());
            ObjectMapper json = new ObjectMapper();
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (String line : rows.out().lines().toList()) {
                var row = json.readTree(line);
                if (!row.get("session").asText().equals(s1)) continue;
                row.fields().forEachRemaining(f -> { if (!f.getValue().isNull()) seen.add(f.getKey()); });
            }
            assertTrue(seen.containsAll(List.of("newThreadId", "oldThreadId", "newThreadPriority", "oldThreadPriority", "previousCState",
                    "oldThreadRank", "newThreadPriorityDecrement", "oldThreadWaitReason", "oldThreadWaitMode", "oldThreadState",
                    "oldThreadIdealProcessor", "newThreadWaitTicks", "oldThreadRemainingQuantum")), seen.toString());
        }
    }

    @Test
    void aCorruptBufferGoesToDeadLettersAndTheRestIsCounted(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("corrupt.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(20_000).withMode("cswitch"), 0x28);
        byte[] b = Files.readAllBytes(f);
        int bufferSize = 64 * 1024;
        int buffers = b.length / bufferSize;
        int bad = buffers / 2;
        // an event in the middle buffer claims to run past the fill mark
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putShort(bad * bufferSize + 0x48 + 4, (short) 0xFFF0);
        Files.write(f, b);
        // what survives: every buffer but the bad one, decoded offline the same way
        Path without = dir.resolve("without.etl");
        byte[] w = new byte[b.length - bufferSize];
        System.arraycopy(b, 0, w, 0, bad * bufferSize);
        System.arraycopy(b, (bad + 1) * bufferSize, w, bad * bufferSize, b.length - (bad + 1) * bufferSize);
        // its logfile header (the first event of the first buffer) counts one buffer fewer, or it reads as cut short
        ByteBuffer.wrap(w).order(ByteOrder.LITTLE_ENDIAN).putInt(0x48 + 0x20 + 0x24, w.length / bufferSize);
        Files.write(without, w);
        List<SwitchRow> expected = new ArrayList<>();
        SessionDecoder.decodeFile(without, "h", null, expected::add, null);
        try (Pipeline p = start(kafka)) {
            String session = publish(kafka, f, "h").session();
            TraceSession done = completed(kafka, List.of(session)).get(session);
            assertEquals(1, done.getDeadLetters());
            assertEquals(false, done.getComplete(), "a session that lost a buffer is not complete");
            assertEquals("end-marker", done.getEndReason());
            assertEquals(1, done.getLossReasons().size());
            assertTrue(done.getLossReasons().get(0).contains("runs past the fill mark"), done.getLossReasons().toString());
            assertEquals(expected.size(), done.getSwitchCount(), "every other buffer's switches are counted");
            List<ConsumerRecord<String, byte[]>> dead = read(kafka, SwapstreamConfig.DEAD_LETTERS, rs -> !rs.isEmpty());
            ConsumerRecord<String, byte[]> letter = dead.get(0);
            assertEquals(session, letter.key());
            String error = new String(letter.headers().lastHeader(SwapstreamConfig.HEADER_ERROR).value(), StandardCharsets.UTF_8);
            assertTrue(error.contains("runs past the fill mark"), error);
            assertTrue(error.contains("byte offset " + (bad * bufferSize + 0x48)), error);
            // the buffer's bytes as published: up to its fill mark, the filler after it left out
            byte[] inFile = java.util.Arrays.copyOfRange(b, bad * bufferSize, (bad + 1) * bufferSize);
            assertEquals(ByteBuffer.wrap(inFile).order(ByteOrder.LITTLE_ENDIAN).getInt(0x30), letter.value().length);
            org.junit.jupiter.api.Assertions.assertArrayEquals(inFile, BufferFiller.restore(letter.value(), bufferSize));
            assertEquals(String.valueOf(bad), new String(letter.headers().lastHeader(SwapstreamConfig.HEADER_BUFFER_INDEX).value(), StandardCharsets.UTF_8));
        }
    }

    /**
     * A session whose buffers stop coming: after the idle timeout it ends incomplete on the broker,
     * its final rows come out, its decode state is gone, and a buffer that comes later is a dead letter.
     */
    @Test
    void aSessionThatGoesQuietEndsIncomplete(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("quiet.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(6_000), 0x28);
        byte[] b = Files.readAllBytes(f);
        int size = 64 * 1024;
        String session = BufferPublisher.sessionOf(f, "h");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 2, (short) 1);
        }
        Map<String, Object> pc = Map.of("bootstrap.servers", kafka.servers(), "max.request.size", SwapstreamConfig.MAX_MESSAGE_BYTES);
        try (Pipeline p = Pipeline.start(kafka.servers(), "it-" + prefix, dir.resolve("state"), prefix, 2, (short) 1, 60_000_000_000L, 200,
                Map.of("commit.interval.ms", "100", SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS, "2000"));
             var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, byte[]>(pc,
                     new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            java.util.function.IntConsumer send = i -> {
                var rec = new org.apache.kafka.clients.producer.ProducerRecord<String, byte[]>(prefix + SwapstreamConfig.RAW_BUFFERS, session,
                        java.util.Arrays.copyOfRange(b, i * size, (i + 1) * size));
                rec.headers().add(SwapstreamConfig.HEADER_BUFFER_INDEX, String.valueOf(i).getBytes(StandardCharsets.UTF_8));
                try {
                    producer.send(rec).get();
                } catch (Exception ex) {
                    throw new AssertionError(ex);
                }
            };
            for (int i = 0; i < 3; i++) send.accept(i);
            TraceSession end = completed(kafka, List.of(session)).get(session);
            assertEquals("idle-timeout", end.getEndReason());
            assertEquals(false, end.getComplete());
            assertTrue(end.getLossReasons().get(0).contains("no buffer for 2 s"), end.getLossReasons().toString());
            long rows = rows(read(kafka, SwapstreamConfig.SWITCH_BATCHES, rs -> rows(rs) >= end.getSwitchCount()));
            assertEquals((long) end.getSwitchCount(), rows);
            // the aggregate ends it too: every row final, the session's state gone
            read(kafka, SwapstreamConfig.THREAD_STATS, rs -> finishedSwitches(p.aggregate, session) != null);
            assertEquals((long) end.getSwitchCount(), finishedSwitches(p.aggregate, session));
            // both stages keep only the ended session's progress, and the aggregate its thread labels (its rows' readiers
            // are named by them until the session's retention)
            for (String store : StateSizeIT.DECODE_PART_STORES) {
                assertTrue(StateSizeIT.keys(p.decode, store).stream().noneMatch(k -> k.startsWith(session)), "nothing left in " + store);
            }
            for (String store : List.of(io.swapstream.aggregate.streams.AggregateTopology.ACCUMULATORS_STORE,
                    io.swapstream.aggregate.streams.AggregateTopology.REDO_STORE)) {
                assertTrue(StateSizeIT.keys(p.aggregate, store).stream().noneMatch(k -> k.startsWith(session)), "nothing left in " + store);
            }
            send.accept(3);
            List<ConsumerRecord<String, byte[]>> dead = read(kafka, SwapstreamConfig.DEAD_LETTERS, rs -> !rs.isEmpty());
            String error = new String(dead.get(0).headers().lastHeader(SwapstreamConfig.HEADER_ERROR).value(), StandardCharsets.UTF_8);
            assertTrue(error.contains("has ended (idle-timeout)"), error);
        }
    }

    static Long finishedSwitches(org.apache.kafka.streams.KafkaStreams aggregate, String session) {
        return StateSizeIT.finished(aggregate, session);
    }

    /**
     * A file cut off in the middle of a buffer: what precedes it is decoded, the rest goes to the dead
     * letters at ingest, and the session says it is incomplete and why. Publishing the file again
     * once the session has ended is refused with a warning.
     */
    @Test
    void aTruncatedFileGivesAnIncompleteSessionAndReIngestIsRefused(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("cut.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(6_000), 0x28);
        byte[] b = Files.readAllBytes(f);
        int size = 64 * 1024;
        Files.write(f, java.util.Arrays.copyOf(b, 3 * size + 1000));
        try (Pipeline p = start(kafka)) {
            CliRunner first = CliRunner.run("ingest", f.toString(), "-b", kafka.servers(), "--topic-prefix", prefix, "--host", "cut");
            assertEquals(Swapstream.EXIT_BAD_INPUT, first.exit(), first.err());
            assertTrue(first.err().contains("truncated"), first.err());
            String session = BufferPublisher.sessionOf(f, "cut");
            TraceSession done = completed(kafka, List.of(session)).get(session);
            assertEquals(false, done.getComplete());
            assertEquals("end-marker", done.getEndReason());
            assertEquals(3, done.getBuffers());
            assertEquals(1, done.getDeadLetters());
            assertTrue(done.getLossReasons().get(0).startsWith("ingest: ") && done.getLossReasons().get(0).contains("truncated"),
                    done.getLossReasons().toString());
            CliRunner again = CliRunner.run("ingest", f.toString(), "-b", kafka.servers(), "--topic-prefix", prefix, "--host", "cut");
            assertEquals(Swapstream.EXIT_BAD_INPUT, again.exit(), again.err());
            assertEquals("swapstream: warning: session " + session + " (" + f + ") was published before and has ended; not"
                    + " publishing it again (a different --host makes it a new session)", again.err().strip());

            // cut at a buffer's end it frames whole: its logfile header says what it lacks
            Path atEnd = Files.write(dir.resolve("atend.etl"), java.util.Arrays.copyOf(b, 3 * size));
            CliRunner cut = CliRunner.run("ingest", atEnd.toString(), "-b", kafka.servers(), "--topic-prefix", prefix, "--host", "atend");
            assertEquals(Swapstream.EXIT_BAD_INPUT, cut.exit(), cut.err());
            String said = "swapstream: " + atEnd + ": byte offset " + 3 * size + " (0x" + Integer.toHexString(3 * size) + "): its logfile"
                    + " header says " + b.length / size + " buffers were written; the file holds 3: cut short (published as it is;"
                    + " the session is marked incomplete)";
            assertTrue(cut.err().startsWith(said + "\n"), cut.err());
            String atEndSession = BufferPublisher.sessionOf(atEnd, "atend");
            TraceSession atEndDone = completed(kafka, List.of(atEndSession)).get(atEndSession);
            assertEquals(false, atEndDone.getComplete());
            assertEquals(3, atEndDone.getBuffers());
            assertEquals(0, atEndDone.getDeadLetters());
            assertTrue(atEndDone.getLossReasons().get(0).startsWith("ingest: ") && atEndDone.getLossReasons().get(0).endsWith("cut short"),
                    atEndDone.getLossReasons().toString());
        }
    }

    @Test
    void runWindowedRowsEqualTheStatsCommand(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("trace.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        CliRunner run = CliRunner.run("run", f.toString(), "--bootstrap-servers", kafka.servers(), "--topic-prefix",
                prefix, "--format", "jsonl", "--window", "1s");
        assertEquals(0, run.exit(), run.err());
        java.util.Set<Object> e = jsonRows(CliRunner.run("stats", f.toString(), "--format", "jsonl", "--window", "1s"));
        assertTrue(e.size() > 20);
        assertEquals(e, jsonRows(run));
    }

    /**
     * The schemas {@code swapstream schemas} writes, each parsed alone, decode every record of the topics through
     * Avro's generic reader (no generated class), looked up by the fingerprint each record carries.
     */
    @Test
    void theWrittenSchemasDecodeEveryTopicWithAGenericReader(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("schemas-trace.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        CliRunner run = CliRunner.run("run", f.toString(), "--bootstrap-servers", kafka.servers(), "--topic-prefix", prefix, "--window", "1s",
                "--format", "jsonl");
        assertEquals(0, run.exit(), run.err());
        Path schemas = dir.resolve("schemas");
        assertEquals(0, CliRunner.run("schemas", "--out", schemas.toString()).exit());
        Map<Long, org.apache.avro.Schema> byFingerprint = new HashMap<>();
        try (var files = Files.newDirectoryStream(schemas, "*.avsc")) {
            for (Path s : files) {
                org.apache.avro.Schema schema = new org.apache.avro.Schema.Parser().parse(s.toFile()); // alone: a fresh parser each
                byFingerprint.put(org.apache.avro.SchemaNormalization.parsingFingerprint64(schema), schema);
            }
        }
        Map<String, Integer> decoded = new HashMap<>();
        for (String topic : List.of(SwapstreamConfig.SESSIONS, SwapstreamConfig.SWITCH_BATCHES, SwapstreamConfig.THREADS,
                SwapstreamConfig.THREAD_STATS)) {
            for (ConsumerRecord<String, byte[]> r : PipelineIT.read(kafka.servers(), prefix + topic, rs -> !rs.isEmpty())) {
                ByteBuffer b = ByteBuffer.wrap(r.value()).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals((byte) 0xC3, b.get());
                assertEquals((byte) 0x01, b.get());
                org.apache.avro.Schema writer = byFingerprint.get(b.getLong());
                assertTrue(writer != null, "a schema written for the fingerprint of a record on " + topic);
                org.apache.avro.generic.GenericRecord g = new org.apache.avro.generic.GenericDatumReader<org.apache.avro.generic.GenericRecord>(writer)
                        .read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(r.value(), 10, r.value().length - 10, null));
                assertTrue(r.key().startsWith(g.get("session").toString()), r.key());
                decoded.merge(topic, 1, Integer::sum);
            }
        }
        assertEquals(4, decoded.size(), decoded.toString());
    }

    /**
     * {@code tail --last N} prints the last N records of each partition, though offsets count transaction markers too;
     * switch batches print decoded, as stored, or a line a switch; a topic that does not exist is an error, and stays
     * absent: neither tail nor the broker creates it.
     */
    @Test
    void tailPrintsTheLastNRecordsAndCreatesNoTopic(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("tail-trace.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        assertEquals(0, CliRunner.run("run", f.toString(), "--bootstrap-servers", kafka.servers(), "--topic-prefix", prefix, "--window", "1s",
                "--format", "jsonl").exit());
        Map<Integer, Integer> perPartition = new HashMap<>();
        for (ConsumerRecord<String, byte[]> r : read(kafka, SwapstreamConfig.THREAD_STATS, rs -> !rs.isEmpty())) {
            perPartition.merge(r.partition(), 1, Integer::sum);
        }
        for (int n : new int[] {1, 2, 5}) {
            CliRunner tail = CliRunner.run("tail", "thread-stats", "--last", String.valueOf(n), "-b", kafka.servers(), "--topic-prefix", prefix);
            assertEquals(0, tail.exit(), tail.err());
            int expected = perPartition.values().stream().mapToInt(c -> Math.min(c, n)).sum();
            assertEquals(expected, tail.out().lines().count(), "--last " + n);
        }
        // switch batches: decoded into a column per field by default, the stored record with --stored, a line a switch with --rows
        ObjectMapper json = new ObjectMapper();
        CliRunner decoded = CliRunner.run("tail", "switch-batches", "--from-beginning", "-b", kafka.servers(), "--topic-prefix", prefix);
        CliRunner stored = CliRunner.run("tail", "switch-batches", "--from-beginning", "--stored", "-b", kafka.servers(), "--topic-prefix", prefix);
        CliRunner rows = CliRunner.run("tail", "switch-batches", "--from-beginning", "--rows", "-b", kafka.servers(), "--topic-prefix", prefix);
        assertEquals(0, decoded.exit() + stored.exit() + rows.exit(), decoded.err() + stored.err() + rows.err());
        List<String> batches = decoded.out().lines().toList();
        List<String> records = stored.out().lines().toList();
        assertEquals(batches.size(), records.size());
        long switches = 0;
        for (int i = 0; i < batches.size(); i++) {
            var b = json.readTree(batches.get(i));
            var r = json.readTree(records.get(i));
            int count = b.get("count").asInt();
            assertEquals(count, b.get("timeNanos").size());
            assertEquals(count, b.get("oldThreadRunNanos").size());
            long t = 0;
            for (int k = 0; k < count; k++) {
                t += r.get("timestampDeltas").get(k).asLong();
                assertEquals(t, b.get("timestamp").get(k).asLong(), "timestamp " + k + " is the running sum of timestampDeltas");
            }
            assertTrue(r.has("threadIds") && !r.has("timeNanos"), "stored: the dictionary, and timeNanos derived");
            switches += count;
        }
        assertTrue(switches >= 8000, switches + " switches");
        assertEquals(switches, rows.out().lines().count());
        String missing = "yy" + UUID.randomUUID().toString().substring(0, 6) + ".";
        CliRunner tail = CliRunner.run("tail", "sessions", "-b", kafka.servers(), "--topic-prefix", missing);
        assertEquals(2, tail.exit());
        assertTrue(tail.err().contains("does not exist"), tail.err());
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            assertFalse(admin.listTopics().names().get().contains(missing + "sessions"), "not created by reading it");
            if (kafka.kind().equals("in-jvm")) {
                var broker = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER,
                        admin.describeCluster().nodes().get().iterator().next().idString());
                assertEquals("false", admin.describeConfigs(List.of(broker)).all().get().get(broker).get("auto.create.topics.enable").value());
            }
        }
    }

    /** Several files through run, in a table: each window's processes across them, as stats --group process prints them. */
    @Test
    void runPrintsEachWindowsProcessesAcrossTheFilesAsStatsGroupProcess(KafkaBroker.Bootstrap kafka) throws Exception {
        List<String> files = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            Path f = dir.resolve("web0" + i + ".etl");
            // both hosts over the same windows: with a start of "now" each, the second starts a window or two after the
            // first, and a window of the first alone may close before the second's rows come (a revision follows)
            assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "20000", "--seed", String.valueOf(i),
                    "--start", "2025-08-18T14:13:00Z").exit());
            files.add(f.toString());
        }
        List<String> runArgs = new ArrayList<>(List.of("run", "--bootstrap-servers", kafka.servers(), "--topic-prefix", prefix, "--format", "table",
                "--window", "1s", "--top", "1000"));
        runArgs.addAll(files);
        CliRunner run = CliRunner.run(runArgs.toArray(String[]::new));
        assertEquals(0, run.exit(), run.err());
        List<String> statsArgs = new ArrayList<>(List.of("stats", "--group", "process", "--window", "1s", "--format", "table"));
        statsArgs.addAll(files);
        java.util.Set<String> offline = new java.util.HashSet<>(CliRunner.run(statsArgs.toArray(String[]::new)).out().lines().toList());
        List<String> tables = run.out().lines().dropWhile(l -> !l.startsWith("processes across the files")).toList();
        // --top 2 is two threads per window
        List<String> runTop2Args = new ArrayList<>(runArgs);
        runTop2Args.set(runTop2Args.indexOf("1000"), "2");
        runTop2Args.set(runTop2Args.indexOf(prefix), "top2" + prefix); // the same files again: other topics
        CliRunner top2 = CliRunner.run(runTop2Args.toArray(String[]::new));
        Map<String, Integer> perWindow = new HashMap<>();
        top2.out().lines().takeWhile(l -> !l.startsWith("(times")).filter(l -> l.matches("^\\d{4}-.*"))
                .forEach(l -> perWindow.merge(l.substring(0, 24), 1, Integer::sum));
        assertTrue(perWindow.size() >= 2 && perWindow.values().stream().allMatch(c -> c == 2), top2.out() + top2.err());
        long windows = tables.stream().filter(l -> l.startsWith("processes across the files")).count();
        List<String> rows = tables.stream().filter(l -> l.contains(".exe") || l.contains("(unknown)")).toList();
        assertTrue(windows >= 2 && rows.size() > windows, run.out() + run.err());
        for (String row : rows) assertTrue(offline.contains(row), "as stats --group process prints it: " + row);
        assertTrue(rows.stream().anyMatch(r -> r.contains("web01, web02") || r.contains("web02, web01")), "processes on both hosts");
    }

    @Test
    void runWritesWholeSessionStatsEqualToTheStatsCommand(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("trace.etl");
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "8000").exit());
        Path out = dir.resolve("stats.jsonl");
        CliRunner run = CliRunner.run("run", f.toString(), "--bootstrap-servers", kafka.servers(), "--topic-prefix",
                prefix, "--format", "jsonl", "--out", out.toString());
        assertEquals(0, run.exit(), run.err());
        CliRunner stats = CliRunner.run("stats", f.toString(), "--format", "jsonl");
        ObjectMapper json = new ObjectMapper();
        List<Object> a = new ArrayList<>();
        for (String l : Files.readAllLines(out)) a.add(json.readTree(l));
        List<Object> e = new ArrayList<>();
        for (String l : stats.out().lines().toList()) e.add(json.readTree(l));
        assertTrue(e.size() > 10);
        assertEquals(e, a);
    }

    /**
     * A session's end emits a final row per thread in one transaction: 8,000 threads' rows are more
     * than a changelog segment of 4 MiB, which the aggregate once kept as one record the broker refused
     * (RecordBatchTooLargeException: the stage stopped and the rows were never committed).
     */
    @Test
    void aSessionOfThousandsOfThreadsEndsWithEveryFinalRowCommitted(KafkaBroker.Bootstrap kafka) throws Exception {
        Path f = dir.resolve("threads.etl");
        // every thread exits after one run slice and another starts: about 8,000 threads, each with a row
        assertEquals(0, CliRunner.run("generate", "-o", f.toString(), "--switches", "60000", "--cpus", "4", "--processes", "10",
                "--threads-per-process", "10", "--exit-rate", "1", "--no-noise").exit());
        // windowed: run reads the rows back from the topic, committed, not from the aggregate's store
        CliRunner run = CliRunner.run("run", f.toString(), "--bootstrap-servers", kafka.servers(), "--topic-prefix",
                prefix, "--format", "jsonl", "--window", "60s", "--timeout", "120s");
        assertEquals(0, run.exit(), run.err());
        java.util.Set<Object> e = jsonRows(CliRunner.run("stats", f.toString(), "--format", "jsonl", "--window", "60s"));
        assertTrue(e.size() > 7000, e.size() + " rows");
        assertEquals(e, jsonRows(run));
    }

    /** A command's JSON lines, as a set: run and stats may list the same rows in different orders. */
    static java.util.Set<Object> jsonRows(CliRunner command) throws java.io.IOException {
        ObjectMapper json = new ObjectMapper();
        java.util.Set<Object> rows = new java.util.HashSet<>();
        for (String l : command.out().lines().toList()) rows.add(json.readTree(l));
        return rows;
    }
}
