package io.swapstream.aggregate.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.AccumulatorCodec;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStats;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.ThreadInfo;
import io.swapstream.decode.streams.AvroRecords;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
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
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AggregateTopologyTest {
    @TempDir Path dir;

    @Test
    void completedSessionEmitsTheOfflineStatistics() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(5000).withMode("cswitch").withPmc(1), 0x28);
        List<ContextSwitch> switches = new ArrayList<>();
        List<ThreadInfo> threads = new ArrayList<>();
        SessionStatistics offline = new SessionStatistics(100_000_000L);
        SessionDecoder d = SessionDecoder.decodeFile(f, "h", null, s -> { switches.add(s); offline.accept(s); }, threads::add);
        String session = d.session().session();
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "aggregate-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
        StreamsBuilder b = new StreamsBuilder();
        AggregateTopology.build(b, Map.of(), 100_000_000L, 60_000);
        try (TopologyTestDriver driver = new TopologyTestDriver(b.build(), p)) {
            var threadsIn = driver.createInputTopic("etw.threads", new StringSerializer(),
                    new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ThreadInfo.class));
            var switchesIn = driver.createInputTopic("etw.context-switches", new StringSerializer(),
                    new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ContextSwitch.class));
            var sessionsIn = driver.createInputTopic("etw.sessions", new StringSerializer(), new SingleObjectAvroSerde<>(TraceSession.class));
            for (ThreadInfo t : threads) threadsIn.pipeInput(session + "/" + t.threadId(), AvroRecords.of(t));
            for (ContextSwitch s : switches) switchesIn.pipeInput(session, AvroRecords.of(s));
            sessionsIn.pipeInput(session, AvroRecords.of(d.session()).setComplete(true).setEndReason("end-marker").setSwitchCount((long) switches.size())
                    .setThreadRecords(threads.size()).build());
            var out = driver.createOutputTopic("etw.thread-stats", new StringDeserializer(),
                    new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ThreadStats.class));
            Map<String, ThreadStats> latest = new HashMap<>();
            for (TestRecord<String, io.swapstream.schemas.avro.ThreadStats> r : out.readRecordsToList()) {
                latest.put(r.key(), ThreadStatsRecords.of(r.value()));
            }
            List<ThreadStats> expected = offline.wholeSession(d.directory()::thread);
            for (ThreadStats t : expected) assertEquals(t, latest.get(session + "/" + t.threadId()));
            List<ThreadStats> windows = offline.windowed(d.directory()::thread);
            assertTrue(windows.size() > expected.size());
            for (ThreadStats t : windows) {
                assertEquals(t, latest.get(session + "/" + t.threadId() + "/" + t.windowStartNanos()));
            }
            assertEquals(expected.size() + windows.size(), latest.size());
            assertEquals((long) switches.size(), driver.getKeyValueStore(AggregateTopology.DONE_STORE).get(session));
        }
    }

    @Test
    void accumulatorCodecRoundTrips() {
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.switchIn(10, 500L, 2L);
        a.switchIn(20, 70_000L, null);
        a.switchOut(30, 5, 15, 9, 123L);
        a.switchOut(40, 1, -1, 12, null);
        a.pmc(new long[] {7, 8});
        ThreadStatsAccumulator b = AccumulatorCodec.decode(AccumulatorCodec.encode(a));
        assertEquals(a.toStats("s", "h", 1, 2, "p", "t", 0, 1), b.toStats("s", "h", 1, 2, "p", "t", 0, 1));
        ThreadStatsAccumulator empty = AccumulatorCodec.decode(AccumulatorCodec.encode(new ThreadStatsAccumulator()));
        assertEquals(new ThreadStatsAccumulator().toStats("s", "h", 1, null, null, null, 0, 1), empty.toStats("s", "h", 1, null, null, null, 0, 1));
    }
}
