package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.FileInventory;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The decode topology on the test driver: outputs per topic, duplicates, re-ingest, a bad key. */
class DecodeTopologyTest {
    @TempDir Path dir;

    @Test
    void decodesBuffersIntoEveryOutputTopic() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000), 0x28);
        // batches come after events their processor logged while they were open, as the kernel writes them
        assertTrue(FileInventory.of(f, null).batchesAfterNewerEvents() > 0);
        List<ContextSwitch> expected = new ArrayList<>();
        SessionDecoder offline = SessionDecoder.decodeFile(f, "h", null, expected::add, null);
        assertEquals(0, offline.counters().emittedOutOfOrder + offline.counters().lateEvents);
        for (int i = 1; i < expected.size(); i++) assertTrue(expected.get(i - 1).timestamp() <= expected.get(i).timestamp());
        String session = offline.session().session();
        try (TopologyTestDriver driver = driver("state")) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int size = 64 * 1024;
            for (int i = 0; i < bytes.length / size; i++) {
                raw.pipeInput(record(session, Arrays.copyOfRange(bytes, i * size, (i + 1) * size), i, false));
                if (i == 2) raw.pipeInput(record(session, Arrays.copyOfRange(bytes, size, 2 * size), 1, false)); // a resent buffer
            }
            raw.pipeInput(record(session, new byte[0], bytes.length / size, true));
            raw.pipeInput(record(session, Arrays.copyOfRange(bytes, 0, size), 0, false)); // the whole file again, later
            raw.pipeInput(record(null, new byte[] {1}, 0, false));

            TestOutputTopic<String, io.swapstream.schemas.avro.ContextSwitch> switches = driver.createOutputTopic(
                    "etw.context-switches", new StringDeserializer(), new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ContextSwitch.class));
            List<ContextSwitch> got = switches.readValuesToList().stream().map(AvroRecords::of).toList();
            assertEquals(expected, got);
            TestOutputTopic<String, TraceSession> sessions = driver.createOutputTopic("etw.sessions", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(TraceSession.class));
            List<TraceSession> s = sessions.readValuesToList();
            assertEquals(2, s.size());
            assertTrue(!s.get(0).getComplete() && s.get(1).getComplete());
            assertEquals(expected.size(), s.get(1).getSwitchCount());
            TestOutputTopic<String, ThreadInfo> threads = driver.createOutputTopic("etw.threads", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(ThreadInfo.class));
            List<TestRecord<String, ThreadInfo>> t = threads.readRecordsToList();
            assertEquals(s.get(1).getThreadRecords(), t.size());
            assertTrue(t.stream().allMatch(r -> r.key().startsWith(session + "/")));
            TestOutputTopic<String, byte[]> dead = driver.createOutputTopic("etw.dead-letters", new StringDeserializer(), new ByteArrayDeserializer());
            List<TestRecord<String, byte[]>> letters = dead.readRecordsToList();
            assertEquals(2, letters.size());
            assertTrue(header(letters.get(0), SwapstreamConfig.HEADER_ERROR).contains("already complete"));
            assertTrue(header(letters.get(1), SwapstreamConfig.HEADER_ERROR).contains("without a session key"));
        }
    }

    @Test
    void buffersThatArriveEarlyWaitForTheGap() throws Exception {
        Path f = dir.resolve("o.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        List<ContextSwitch> expected = new ArrayList<>();
        String session = SessionDecoder.decodeFile(f, "h", null, expected::add, null).session().session();
        try (TopologyTestDriver driver = driver("state2")) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int size = 64 * 1024;
            int n = bytes.length / size;
            // 0, then every pair swapped: 2 1 4 3 ...
            List<Integer> order = new ArrayList<>(List.of(0));
            for (int i = 1; i < n; i += 2) {
                if (i + 1 < n) order.add(i + 1);
                order.add(i);
            }
            for (int i : order) raw.pipeInput(record(session, Arrays.copyOfRange(bytes, i * size, (i + 1) * size), i, false));
            raw.pipeInput(record(session, new byte[0], n, true));
            TestOutputTopic<String, io.swapstream.schemas.avro.ContextSwitch> switches = driver.createOutputTopic(
                    "etw.context-switches", new StringDeserializer(), new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ContextSwitch.class));
            assertEquals(expected, switches.readValuesToList().stream().map(AvroRecords::of).toList());
            TestOutputTopic<String, byte[]> dead = driver.createOutputTopic("etw.dead-letters", new StringDeserializer(), new ByteArrayDeserializer());
            assertTrue(dead.isEmpty());
        }
    }

    @Test
    void aMissingBufferIsReportedAtTheEnd() throws Exception {
        Path f = dir.resolve("m.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000).withMode("cswitch"), 0x28);
        String session = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).session().session();
        try (TopologyTestDriver driver = driver("state3")) {
            TestInputTopic<String, byte[]> raw = rawBuffers(driver);
            byte[] bytes = Files.readAllBytes(f);
            int size = 64 * 1024;
            int n = bytes.length / size;
            for (int i = 0; i < n; i++) if (i != 2) raw.pipeInput(record(session, Arrays.copyOfRange(bytes, i * size, (i + 1) * size), i, false));
            raw.pipeInput(record(session, new byte[0], n, true));
            TestOutputTopic<String, byte[]> dead = driver.createOutputTopic("etw.dead-letters", new StringDeserializer(), new ByteArrayDeserializer());
            List<TestRecord<String, byte[]>> letters = dead.readRecordsToList();
            assertEquals(1, letters.size());
            assertTrue(header(letters.get(0), SwapstreamConfig.HEADER_ERROR).contains("buffers 2 to " + (n - 1) + " of session"),
                    header(letters.get(0), SwapstreamConfig.HEADER_ERROR));
        }
    }

    /** The decode topology on a test driver with its own state directory. */
    TopologyTestDriver driver(String state) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "decode-test-" + state);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(state).toString());
        StreamsBuilder b = new StreamsBuilder();
        DecodeTopology.build(b, Map.of());
        return new TopologyTestDriver(b.build(), p);
    }

    static TestInputTopic<String, byte[]> rawBuffers(TopologyTestDriver driver) {
        return driver.createInputTopic("etw.raw-buffers", new StringSerializer(), new ByteArraySerializer());
    }

    static TestRecord<String, byte[]> record(String key, byte[] value, long index, boolean end) {
        RecordHeaders h = new RecordHeaders();
        h.add(SwapstreamConfig.HEADER_HOST, "h".getBytes(StandardCharsets.UTF_8));
        h.add(SwapstreamConfig.HEADER_BUFFER_INDEX, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
        if (end) h.add(SwapstreamConfig.HEADER_END_OF_SESSION, String.valueOf(index).getBytes(StandardCharsets.UTF_8));
        return new TestRecord<>(key, value, h);
    }

    static String header(TestRecord<String, byte[]> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
