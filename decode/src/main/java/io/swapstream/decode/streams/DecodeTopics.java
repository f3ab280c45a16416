package io.swapstream.decode.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.stage.Topic;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;

/** The decode stage's input and outputs, with their serdes. */
public record DecodeTopics(Topic<byte[]> raw, Topic<SwitchBatch> batches, Topic<ContextSwitch> switches, Topic<ThreadInfo> threads,
                           Topic<TraceSession> sessions, Topic<byte[]> deadLetters) {

    public static DecodeTopics from(Map<String, ?> config) {
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        return new DecodeTopics(Topic.of(topic(config, SwapstreamConfig.RAW_BUFFERS), Serdes.ByteArray()),
                Topic.of(topic(config, SwapstreamConfig.SWITCH_BATCHES), SwitchBatchSerde.forConfig(config)),
                Topic.of(topic(config, SwapstreamConfig.CONTEXT_SWITCHES), serdes.serde(ContextSwitch.class, config)),
                Topic.of(topic(config, SwapstreamConfig.THREADS), serdes.serde(ThreadInfo.class, config)),
                Topic.of(topic(config, SwapstreamConfig.SESSIONS), serdes.serde(TraceSession.class, config)),
                // a dead letter goes where the default partitioner puts its key: it may not be a session's
                new Topic<>(topic(config, SwapstreamConfig.DEAD_LETTERS), Serdes.ByteArray(), false));
    }
}
