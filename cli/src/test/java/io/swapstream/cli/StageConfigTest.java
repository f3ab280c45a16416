package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
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
}
