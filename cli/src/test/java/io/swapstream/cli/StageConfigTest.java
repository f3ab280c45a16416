package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.local.StageConfig;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StageConfigTest {
    /**
     * Users over plain HTTP beyond loopback: one line and exit 2 before Kafka is asked, unless --http-users-in-clear
     * says so (the address is a documentation one, never bound: the refusal comes first).
     */
    @Test
    void aStageRefusesUsersOverPlainHttpBeyondLoopback(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path users = dir.resolve("users");
        java.nio.file.Files.writeString(users, io.swapstream.http.HttpUsers.line("ana", "s3cret".toCharArray()) + "\n");
        CliRunner r = CliRunner.run("aggregate", "-b", "127.0.0.1:1", "--state-dir", dir.resolve("state").toString(),
                "--http", "192.0.2.1:8080", "--http-users", users.toString());
        assertEquals(2, r.exit(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("--http-users-in-clear"), r.err());
    }

    static Object producerCompression(Map<String, String> overrides) {
        var p = StageConfig.streams(StageConfig.DECODE, "127.0.0.1:9092", "t", Path.of("state"), "etw.", (short) 1, overrides);
        return new StreamsConfig(p).getProducerConfigs("client").get(ProducerConfig.COMPRESSION_TYPE_CONFIG);
    }

    /** The stage producers' compression, and the --client-config line the README gives to turn it on. */
    @Test
    void stageProducersDoNotCompressUnlessTheClientConfigSaysSo() {
        assertEquals("none", producerCompression(Map.of()));
        assertEquals("lz4", producerCompression(Map.of("producer.compression.type", "lz4")));
    }

    /**
     * A restore round that finds nothing new waits the restore consumer's fetch wait, and a consumer's close waits
     * for its last fetch: short waits, so a stage starts and stops sooner.
     */
    @Test
    void consumersWaitShortlyForEmptyFetches() {
        var p = StageConfig.streams(StageConfig.AGGREGATE, "127.0.0.1:9092", "t", Path.of("state"), "etw.", (short) 1, Map.of());
        assertEquals(50, new StreamsConfig(p).getRestoreConsumerConfigs("client").get(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
        assertEquals(100, new StreamsConfig(p).getMainConsumerConfigs("g", "client", 0).get(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
    }

    /**
     * Static membership: an instance's id lasts across restarts (the same state directory gives the same
     * id), two instances with state directories of their own differ, and each stream thread's consumer
     * joins under it with its thread's number.
     */
    @Test
    void anInstanceKeepsItsGroupIdentityAcrossRestarts() {
        String id = StageConfig.instanceId(StageConfig.DECODE, Path.of("state-a"));
        assertEquals(id, StageConfig.instanceId(StageConfig.DECODE, Path.of("state-a").toAbsolutePath()));
        assertNotEquals(id, StageConfig.instanceId(StageConfig.DECODE, Path.of("state-b")));
        assertNotEquals(id, StageConfig.instanceId(StageConfig.AGGREGATE, Path.of("state-a")));
        var p = StageConfig.streams(StageConfig.DECODE, "127.0.0.1:9092", "t", Path.of("state"), "etw.", (short) 1,
                Map.of(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), id));
        assertEquals(id + "-1", new StreamsConfig(p).getMainConsumerConfigs("g", "client", 1).get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG));
    }
}
