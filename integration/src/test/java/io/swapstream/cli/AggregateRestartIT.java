package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Directories;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The aggregate stage stopped and started again at many points of a session, its state directory
 * kept or deleted in turn, with a window closing at about every batch and the accumulators written
 * every 4 batches and after each batch that closes a window (a quarter of 4 is 1: no window here is
 * short): each restart finds in the store whole-session accumulators merged from many windows, and
 * takes again the batches since the last write. The final rows equal the offline statistics, each
 * window final once.
 */
@ExtendWith(KafkaBroker.class)
class AggregateRestartIT {
    @TempDir Path dir;

    /** A generated session as the decode stage would send it: its batches, its end record, and the rows offline. */
    record Session(String id, List<byte[]> batches, byte[] end, long window, Map<String, ThreadStats> expected,
                   Map<String, io.swapstream.schemas.avro.WakeEdge> edges) {}

    /** 40,000 switches with about one window per batch. */
    Session session() throws Exception {
        Path f = dir.resolve("t.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(40_000).withMode("cswitch").withPmc(2).withSeed(5);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        List<byte[]> batches = new ArrayList<>();
        List<Long> lastTimes = new ArrayList<>();
        List<io.swapstream.batch.ThreadLabel> threads = new ArrayList<>();
        SessionStatistics whole = new SessionStatistics(0);
        List<SwitchBatch> copies = new ArrayList<>();
        SessionDecoder d = SessionDecoder.decodeBatches(f, "h", null, b -> {
            byte[] bytes = PipelineIT.BATCHES.serialize("t", b);
            batches.add(bytes);
            copies.add(PipelineIT.BATCHES.deserialize("t", bytes));
            if (b.count() > 0) lastTimes.add(b.timeNanos(b.count() - 1));
            whole.accept(b);
        }, threads::add);
        long first = copies.get(0).timeNanos(0);
        long window = Math.max(1, (lastTimes.get(lastTimes.size() - 1) - first) / batches.size());
        SessionStatistics windowed = new SessionStatistics(window);
        copies.forEach(windowed::accept);
        String session = d.session().session();
        Map<String, ThreadStats> expected = new HashMap<>();
        for (ThreadStats t : whole.wholeSession()) expected.put(session + "/" + t.getThreadId(), t);
        for (ThreadStats t : windowed.windowed()) expected.put(session + "/" + t.getThreadId() + "/" + t.getWindowStartNanos(), t);
        Map<String, io.swapstream.schemas.avro.WakeEdge> edges = new HashMap<>();
        for (var e : windowed.wakeEdges()) edges.put(e.getWakerProcess() + "/" + e.getWokenProcess() + "/" + e.getWindowStartNanos() + "/" + session, e);
        assertTrue(batches.size() >= 16, batches.size() + " batches");
        byte[] end = PipelineIT.SESSIONS.serialize("t", AvroRecords.of(d.session()).setComplete(true).setEndReason("end-marker")
                .setSwitchCount(copies.stream().mapToLong(SwitchBatch::count).sum()).setThreadRecords(threads.size()).build());
        return new Session(session, batches, end, window, expected, edges);
    }

    /** The final rows of {@code topic}, once each (asserted), when they include every expected one. */
    static Map<String, ThreadStats> finals(KafkaBroker.Bootstrap kafka, String topic, Map<String, ThreadStats> expected) throws Exception {
        Map<String, ThreadStats> finals = new HashMap<>();
        PipelineIT.read(kafka.servers(), topic, rs -> {
            finals.clear();
            for (ConsumerRecord<String, byte[]> rec : rs) {
                ThreadStats t = PipelineIT.STATS.deserialize("t", rec.value());
                if (!t.getFinal$()) continue;
                assertEquals(null, finals.put(rec.key(), t), "final once: " + rec.key());
            }
            return finals.keySet().containsAll(expected.keySet());
        });
        for (Map.Entry<String, ThreadStats> e : expected.entrySet()) assertEquals(e.getValue(), finals.get(e.getKey()), e.getKey());
        assertEquals(expected.size(), finals.size());
        return finals;
    }

    @Test
    void restartsBetweenAccumulatorWritesChangeNoRow(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "restart" + UUID.randomUUID().toString().substring(0, 6) + ".";
        Session s = session();
        List<byte[]> batches = s.batches();
        String session = s.id();
        long window = s.window();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()));
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", kafka.servers()),
                     new StringSerializer(), new ByteArraySerializer())) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
            String appId = "restart-" + prefix;
            Map<String, String> settings = new java.util.HashMap<>(Pipeline.aggregateSettings(window, 60_000));
            settings.putAll(Map.of("commit.interval.ms", "100", SwapstreamConfig.AGGREGATE_FLUSH_BATCHES, "4"));
            Properties config = StageConfig.streams(StageConfig.AGGREGATE, kafka.servers(), appId, dir.resolve("state"), prefix,
                    (short) 1, settings);
            Topology topology = Pipeline.aggregateTopology(config, new io.swapstream.aggregate.streams.RowIndexes());
            StageConfig.createChangelogs(admin, topology, config, 1);
            String batchTopic = prefix + SwapstreamConfig.SWITCH_BATCHES;
            int restarts = 7;
            int sent = 0;
            for (int r = 0; r <= restarts; r++) {
                KafkaStreams aggregate = new KafkaStreams(topology, config);
                aggregate.start();
                int until = r == restarts ? batches.size() : batches.size() * (r + 1) / (restarts + 1) + r % 3;
                for (; sent < until; sent++) producer.send(new ProducerRecord<>(batchTopic, session, batches.get(sent))).get();
                if (r == restarts) {
                    producer.send(new ProducerRecord<>(prefix + SwapstreamConfig.SESSIONS, session, s.end())).get();
                    finals(kafka, prefix + SwapstreamConfig.THREAD_STATS, s.expected());
                    // each window's wake edges once, as offline: the open window's, written with the accumulators, survive each restart
                    Map<String, io.swapstream.schemas.avro.WakeEdge> edges = new HashMap<>();
                    PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.WAKE_EDGES, rs -> {
                        edges.clear();
                        for (ConsumerRecord<String, byte[]> rec : rs) {
                            assertEquals(null, edges.put(rec.key(), PipelineIT.WAKE_EDGES.deserialize("t", rec.value())), "once: " + rec.key());
                        }
                        return edges.size() >= s.edges().size();
                    });
                    assertTrue(s.edges().size() > 50, s.edges().size() + " edges");
                    assertEquals(s.edges(), edges);
                }
                awaitCommitted(admin, StageConfig.applicationId(appId, StageConfig.AGGREGATE), new TopicPartition(batchTopic, 0), sent);
                aggregate.close(CloseOptions.timeout(Duration.ofSeconds(30))
                        .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
                if (r % 2 == 1) Directories.deleteTree(dir.resolve("state"));
            }
        }
    }

    /** Until the group has committed {@code offset} on {@code tp}: every record sent is in the stage's state. */
    static void awaitCommitted(Admin admin, String group, TopicPartition tp, long offset) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            OffsetAndMetadata m = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp);
            if (m != null && m.offset() >= offset) return;
            if (System.nanoTime() > deadline) throw new AssertionError(group + " committed " + m + ", not " + offset);
            Thread.sleep(100);
        }
    }
}
