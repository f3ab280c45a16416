package io.swapstream.decode.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.decode.SwitchBatchSerde;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;

/**
 * The decode stage: {@code etw.raw-buffers} to {@code etw.switch-batches} (and, when asked,
 * {@code etw.context-switches}), {@code etw.sessions}, {@code etw.threads} and
 * {@code etw.dead-letters}. One processor forwards each output to its own sink; every output is
 * partitioned by session, like its input, so nothing is repartitioned. Its state is in
 * {@link DecodeStores}.
 */
public final class DecodeTopology {
    private DecodeTopology() {}

    /** Each session's progress, under the session's key: what queries read ({@link #hasEnded}). */
    public static final String PROGRESS_STORE = DecodeStores.PROGRESS;
    /** The stores of a session's other parts (checkpoint, redo entries, early buffers): an ended session has none. */
    public static final java.util.List<String> PART_STORES = java.util.List.of(DecodeStores.CHECKPOINTS, DecodeStores.REDO, DecodeStores.EARLY);

    /** True when a value of the {@value #PROGRESS_STORE} store says its session has ended. */
    public static boolean hasEnded(byte[] progress) {
        return progress != null && DecodeProgress.decode(progress).ended();
    }

    public static Topology build(Map<String, ?> config) {
        DecodeSettings settings = DecodeSettings.from(config);
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        StringSerializer keys = new StringSerializer();
        Topology t = new Topology();
        t.addSource("raw-buffers", Serdes.String().deserializer(), Serdes.ByteArray().deserializer(),
                topic(config, SwapstreamConfig.RAW_BUFFERS));
        t.addProcessor("decode", () -> new DecodeProcessor(settings), "raw-buffers");
        DecodeStores.addTo(t, "decode");
        t.addSink(DecodeOutputs.BATCHES, topic(config, SwapstreamConfig.SWITCH_BATCHES), keys,
                SwitchBatchSerde.forConfig(config).serializer(), new SessionPartitioner<>(), "decode");
        t.addSink(DecodeOutputs.SWITCHES, topic(config, SwapstreamConfig.CONTEXT_SWITCHES), keys,
                serdes.serde(ContextSwitch.class, config).serializer(), new SessionPartitioner<>(), "decode");
        t.addSink(DecodeOutputs.THREADS, topic(config, SwapstreamConfig.THREADS), keys,
                serdes.serde(ThreadInfo.class, config).serializer(), new SessionPartitioner<>(), "decode");
        t.addSink(DecodeOutputs.SESSIONS, topic(config, SwapstreamConfig.SESSIONS), keys,
                serdes.serde(TraceSession.class, config).serializer(), new SessionPartitioner<>(), "decode");
        t.addSink(DecodeOutputs.DEAD_LETTERS, topic(config, SwapstreamConfig.DEAD_LETTERS), keys,
                Serdes.ByteArray().serializer(), "decode");
        return t;
    }
}
