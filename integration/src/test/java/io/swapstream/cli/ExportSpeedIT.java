package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.SessionPartitioner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A measurement for docs/performance.md, not part of the suite (it asks for {@code -Dswapstream.measure=true}):
 * {@code export} of one session against reading its partition raw with Kafka's consumer, in one run.
 */
@ExtendWith(KafkaBroker.class)
class ExportSpeedIT {
    @TempDir Path dir;

    @Test
    void exportAgainstARawRead(KafkaBroker.Bootstrap k) throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("swapstream.measure"), "a measurement: -Dswapstream.measure=true runs it");
        String prefix = "speed" + UUID.randomUUID().toString().substring(0, 6) + ".";
        Path f = dir.resolve("big.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withMode("compact").withSwitches(Long.getLong("swapstream.measure.switches", 4_000_000L))
                .withBufferSize(64 * 1024).withSeed(9);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        assertEquals(0, CliRunner.run("ingest", "-b", k.servers(), "--topic-prefix", prefix, "--partitions", "1", "--host", "speed",
                f.toString()).exit());
        String session = BufferPublisher.sessionOf(f, "speed");
        double mb = Files.size(f) / 1e6;
        for (int round = 1; round <= 3; round++) {
            long t0 = System.nanoTime();
            long raw = rawRead(k.servers(), prefix + "raw-buffers");
            long t1 = System.nanoTime();
            Path out = dir.resolve("out.etl");
            CliRunner r = CliRunner.run("export", "-b", k.servers(), "--topic-prefix", prefix, "--session", session, "-o", out.toString());
            long t2 = System.nanoTime();
            assertEquals(0, r.exit(), r.err());
            assertEquals(-1, Files.mismatch(f, out));
            System.out.printf("ExportSpeedIT round %d: file %.1f MB (%.1f MB on the topic); raw consumer %.2f s, %.0f MB/s of file;"
                    + " export %.2f s, %.0f MB/s%n", round, mb, raw / 1e6, (t1 - t0) / 1e9, mb / ((t1 - t0) / 1e9), (t2 - t1) / 1e9,
                    mb / ((t2 - t1) / 1e9));
        }
    }

    /** Every record of the topic's one partition, read_committed, its bytes counted: Kafka's consumer alone. */
    static long rawRead(String servers, String topic) {
        TopicPartition tp = new TopicPartition(topic, SessionPartitioner.partition("x", 1));
        long bytes = 0;
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of("bootstrap.servers", servers, "isolation.level", "read_committed"),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            while (c.position(tp) < end) {
                for (var r : c.poll(Duration.ofMillis(500))) if (r.value() != null) bytes += r.value().length;
            }
        }
        return bytes;
    }
}
