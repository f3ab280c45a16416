package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StageConfigTest {
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
}
