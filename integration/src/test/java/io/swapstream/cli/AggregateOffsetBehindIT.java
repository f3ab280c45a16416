package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.etw.EtlReader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The aggregate's committed input offset behind its committed state, as a single-node broker's kill -9
 * was seen to leave it (a fault outside Kafka's guarantees; README, "What Swapstream needs from
 * Kafka"): the batches read again are skipped by their numbers, not counted twice, and the session
 * ends complete, every row equal to the offline statistics.
 */
@ExtendWith(KafkaBroker.class)
class AggregateOffsetBehindIT {
    @TempDir Path dir;

    @Test
    void batchesTheAggregateTookAreNotTakenTwiceWhenItsOffsetIsBehind(KafkaBroker.Bootstrap kafka) throws Exception {
        run(kafka, (admin, prefix, appId, taken) -> {
            String group = StageConfig.applicationId(appId, StageConfig.AGGREGATE);
            TopicPartition batches = new TopicPartition(prefix + SwapstreamConfig.SWITCH_BATCHES, 0);
            long committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(batches).offset();
            assertTrue(committed >= 4, "the aggregate committed " + committed + " records");
            admin.alterConsumerGroupOffsets(group, Map.of(batches, new OffsetAndMetadata(committed / 2))).all().get();
        });
    }

    static long latest(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get().get(tp).offset();
    }

    /** What happens between the two runs; {@code taken}: the buffers the first run took. */
    interface Between {
        void apply(Admin admin, String prefix, String appId, long taken) throws Exception;
    }

    /** A third of a session through both stages; {@code between} while they are stopped; the rest, the end, and every row checked. */
    void run(KafkaBroker.Bootstrap kafka, Between between) throws Exception {
        String prefix = "gap" + UUID.randomUUID().toString().substring(0, 6) + ".";
        String appId = "gap-" + prefix;
        Path f = dir.resolve("t.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(30_000).withBufferSize(8 * 1024).withSeed(3);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        List<byte[]> buffers = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        try (EtlReader r = EtlReader.open(f).framesOnly()) {
            while (r.next()) {
                buffers.add(Arrays.copyOf(r.rawBytes(), r.rawLength()));
                offsets.add(r.bufferOffset());
            }
        }
        int n = buffers.size();
        assertTrue(n >= 40, n + " buffers");
        String session = BufferPublisher.sessionOf(f, "h");
        SessionStatistics whole = new SessionStatistics(0);
        SessionDecoder.decodeBatches(f, "h", null, whole::accept, null);
        Map<String, ThreadStats> expected = new HashMap<>();
        for (ThreadStats t : whole.wholeSession()) expected.put(session + "/" + t.getThreadId(), t);

        String rawTopic = prefix + SwapstreamConfig.RAW_BUFFERS;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()));
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", kafka.servers()),
                     new StringSerializer(), new ByteArraySerializer())) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
            // a third of the buffers, taken by the stages; then the rest and the end, with the stages stopped
            int taken = n / 3;
            for (int i = 0; i < taken; i++) send(producer, rawTopic, session, f, i, offsets.get(i), buffers.get(i));
            String decodeGroup = StageConfig.applicationId(appId, StageConfig.DECODE);
            TopicPartition raw = new TopicPartition(rawTopic, 0);
            try (Pipeline p = start(kafka, appId, prefix)) {
                AggregateRestartIT.awaitCommitted(admin, decodeGroup, raw, taken);
                // and the aggregate has taken what the decode stage sent of it
                for (String topic : List.of(SwapstreamConfig.SWITCH_BATCHES, SwapstreamConfig.SESSIONS)) {
                    TopicPartition tp = new TopicPartition(prefix + topic, 0);
                    AggregateRestartIT.awaitCommitted(admin, StageConfig.applicationId(appId, StageConfig.AGGREGATE), tp, latest(admin, tp));
                }
            }
            for (int i = taken; i < n; i++) send(producer, rawTopic, session, f, i, offsets.get(i), buffers.get(i));
            RecordHeaders end = BufferPublisher.headers("h", BufferPublisher.streamOf(f), f, n, -1, null);
            end.add(SwapstreamConfig.HEADER_END_OF_SESSION, Long.toString(n).getBytes(StandardCharsets.UTF_8));
            producer.send(new ProducerRecord<>(rawTopic, null, session, new byte[0], end)).get();
            between.apply(admin, prefix, appId, taken);
            try (Pipeline p = start(kafka, appId, prefix)) {
                TraceSession[] ended = new TraceSession[1];
                PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.SESSIONS, rs -> {
                    for (ConsumerRecord<String, byte[]> r : rs) {
                        TraceSession s = PipelineIT.SESSIONS.deserialize("t", r.value());
                        if (s.getEndReason() != null) ended[0] = s;
                    }
                    return ended[0] != null;
                });
                assertEquals(List.of(), ended[0].getLossReasons());
                assertTrue(ended[0].getComplete(), ended[0].toString());
                assertEquals(0, ended[0].getDeadLetters());
                Map<String, ThreadStats> finals = new HashMap<>();
                PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.THREAD_STATS, rs -> {
                    for (ConsumerRecord<String, byte[]> r : rs) {
                        ThreadStats t = PipelineIT.STATS.deserialize("t", r.value());
                        if (t.getFinal$()) finals.put(r.key(), t);
                    }
                    return finals.keySet().containsAll(expected.keySet());
                });
                for (Map.Entry<String, ThreadStats> e : expected.entrySet()) assertEquals(e.getValue(), finals.get(e.getKey()), e.getKey());
            }
        }
    }

    /** Both stages, small batches (some 60 in the session). */
    Pipeline start(KafkaBroker.Bootstrap kafka, String appId, String prefix) throws Exception {
        return Pipeline.start(kafka.servers(), appId, dir.resolve("state"), prefix, 1, (short) 1, 0, 200,
                Map.of("commit.interval.ms", "100", SwapstreamConfig.DECODE_BATCH_ROWS, "500"));
    }

    static void send(KafkaProducer<String, byte[]> producer, String topic, String session, Path f, long index, long offset,
                     byte[] bytes) throws Exception {
        producer.send(new ProducerRecord<>(topic, null, session, bytes, BufferPublisher.headers("h", BufferPublisher.streamOf(f), f, index, offset, null))).get();
    }
}
