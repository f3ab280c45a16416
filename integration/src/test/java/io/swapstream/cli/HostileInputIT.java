package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.etw.BufferHeader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 52 on a real broker: a file whose compressed buffer's match length wraps an int, published under
 * one host, and a record whose host header has no value, go to the dead letters with their reasons;
 * the stage goes on and every other host's session is decoded exactly as offline.
 */
@ExtendWith(KafkaBroker.class)
class HostileInputIT {
    @TempDir Path dir;
    final String prefix = "hi" + UUID.randomUUID().toString().substring(0, 6) + ".";

    /** A generated trace whose buffer 2 is marked compressed over a literal and a match of 0x7FFFFFFD + 3 bytes. */
    static void craft(Path file) throws Exception {
        byte[] b = Files.readAllBytes(file);
        ByteBuffer v = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int at = 2 * v.getInt(0);
        v.putShort(at + 0x34, (short) (v.getShort(at + 0x34) | BufferHeader.FLAG_COMPRESSED));
        v.putInt(at + 0x48, 0x40000000).put(at + 0x4C, (byte) 0).putShort(at + 0x4D, (short) 7).put(at + 0x4F, (byte) 0x0F)
                .put(at + 0x50, (byte) 0xFF).putShort(at + 0x51, (short) 0).putInt(at + 0x53, 0x7FFFFFFD);
        Files.write(file, b);
    }

    @Test
    void hostileInputsAreDeadLettersAndEveryOtherSessionIsExact(KafkaBroker.Bootstrap kafka) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(3000).withSeed(52);
        Map<String, Path> clean = Map.of("web01", dir.resolve("cs.etl"), "web02", dir.resolve("cc.etl"));
        TraceGenerator.generate(clean.get("web01"), o.withMode("cswitch"), MaximumWaitReason.forBuild(o.build()));
        TraceGenerator.generate(clean.get("web02"), o.withMode("compact"), MaximumWaitReason.forBuild(o.build()));
        Path crafted = dir.resolve("crafted.etl");
        TraceGenerator.generate(crafted, o.withMode("compact").withSeed(53), MaximumWaitReason.forBuild(o.build()));
        craft(crafted);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 2, (short) 1);
        }
        try (Pipeline p = Pipeline.start(kafka.servers(), "it-" + prefix, dir.resolve("state"), prefix, 2, (short) 1, 0, 200,
                Map.of("commit.interval.ms", "100"));
             BufferPublisher publisher = new BufferPublisher(kafka.servers(), prefix, Map.of())) {
            // the hostile inputs first: what comes after them on their partitions must still be decoded
            try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", kafka.servers()),
                    new StringSerializer(), new ByteArraySerializer())) {
                for (int partition = 0; partition < 2; partition++) {
                    RecordHeaders h = new RecordHeaders();
                    h.add(SwapstreamConfig.HEADER_HOST, null);
                    h.add(SwapstreamConfig.HEADER_BUFFER_INDEX, "0".getBytes(StandardCharsets.UTF_8));
                    producer.send(new ProducerRecord<>(prefix + SwapstreamConfig.RAW_BUFFERS, partition, "nohost:log:" + partition,
                            Files.readAllBytes(crafted), h)).get();
                }
            }
            // ingest publishes the file as it is, and says in one line that it cannot be decoded
            CliRunner ingest = CliRunner.run("ingest", crafted.toString(), "-b", kafka.servers(), "--topic-prefix", prefix,
                    "--host", "attacker");
            assertEquals(Swapstream.EXIT_BAD_INPUT, ingest.exit(), ingest.err());
            String said = ingest.err().lines().findFirst().orElse("");
            assertTrue(said.startsWith("swapstream: " + crafted + ": byte offset ") && said.contains("match of 2147483648 bytes"), said);
            assertFalse(ingest.err().contains("Exception"), ingest.err());
            String attack = BufferPublisher.sessionOf(crafted, "attacker");
            Map<String, String> sessions = new HashMap<>();
            for (Map.Entry<String, Path> e : clean.entrySet()) sessions.put(publisher.publish(e.getValue(), e.getKey(), null, null).session(), e.getKey());

            List<String> all = new ArrayList<>(sessions.keySet());
            all.add(attack);
            Map<String, TraceSession> done = new HashMap<>();
            PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.SESSIONS, rs -> {
                for (ConsumerRecord<String, byte[]> r : rs) {
                    TraceSession s = PipelineIT.SESSIONS.deserialize("t", r.value());
                    if (s.getEndReason() != null) done.put(r.key(), s);
                }
                return done.keySet().containsAll(all);
            });
            assertFalse(done.get(attack).getComplete());
            assertEquals(1, done.get(attack).getDeadLetters());

            List<ConsumerRecord<String, byte[]>> letters = PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.DEAD_LETTERS,
                    rs -> rs.stream().filter(r -> !r.key().equals(attack)).count() >= 2
                            && rs.stream().anyMatch(r -> r.key().equals(attack)));
            for (ConsumerRecord<String, byte[]> r : letters) {
                String why = new String(r.headers().lastHeader(SwapstreamConfig.HEADER_ERROR).value(), StandardCharsets.UTF_8);
                if (r.key().equals(attack)) {
                    assertTrue(why.contains("crafted.etl buffer 2: byte offset") && why.contains("match of 2147483648 bytes runs past"), why);
                } else {
                    assertTrue(r.key().startsWith("nohost:"), r.key() + ": " + why);
                    assertEquals("header 'host' has no value", why);
                }
            }

            long total = sessions.keySet().stream().mapToLong(s -> done.get(s).getSwitchCount()).sum();
            List<ConsumerRecord<String, byte[]>> batches = PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.SWITCH_BATCHES,
                    rs -> PipelineIT.rows(rs.stream().filter(r -> sessions.containsKey(r.key())).toList()) >= total);
            for (Map.Entry<String, String> e : sessions.entrySet()) {
                String session = e.getKey();
                assertTrue(done.get(session).getComplete());
                assertEquals(0, done.get(session).getDeadLetters());
                List<SwitchRow> offline = new ArrayList<>();
                SessionStatistics stats = new SessionStatistics(0);
                SessionDecoder.decodeBatches(clean.get(e.getValue()), e.getValue(), null, b -> { offline.addAll(b.rows()); stats.accept(b); }, null);
                List<SwitchRow> online = batches.stream().filter(r -> r.key().equals(session))
                        .flatMap(r -> PipelineIT.BATCHES.deserialize("t", r.value()).rows().stream()).toList();
                assertEquals(offline, online, "switches of " + session);
                List<ThreadStats> expected = stats.wholeSession();
                Map<String, ThreadStats> latest = new HashMap<>();
                PipelineIT.read(kafka.servers(), prefix + SwapstreamConfig.THREAD_STATS, rs -> {
                    latest.clear();
                    for (ConsumerRecord<String, byte[]> r : rs) {
                        if (r.key().startsWith(session + "/")) latest.put(r.key(), PipelineIT.STATS.deserialize("t", r.value()));
                    }
                    return expected.stream().allMatch(t -> t.equals(latest.get(session + "/" + t.getThreadId())));
                });
            }
        }
    }
}
