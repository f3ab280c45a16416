package io.swapstream.decode.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The decode stage: {@code etw.raw-buffers} to {@code etw.context-switches}, {@code etw.sessions},
 * {@code etw.threads} and {@code etw.dead-letters}. Every output is partitioned by session, like
 * its input, so nothing is repartitioned.
 */
public final class DecodeTopology {
    private DecodeTopology() {}

    public static final String BUFFERS_STORE = "decode-buffers";
    public static final String PROGRESS_STORE = "decode-progress";

    /** True when a value of the {@value #PROGRESS_STORE} store says its session is fully decoded. */
    public static boolean isDone(byte[] progress) {
        return DecodeProgress.decode(progress).done();
    }

    public static void build(StreamsBuilder builder, Map<String, ?> config) {
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        Map<String, String> bigValues = Map.of("max.message.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(BUFFERS_STORE),
                Serdes.String(), Serdes.ByteArray()).withLoggingEnabled(bigValues));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PROGRESS_STORE),
                Serdes.String(), Serdes.ByteArray()));
        KStream<String, Object> decoded = builder
                .stream(topic(config, SwapstreamConfig.RAW_BUFFERS), Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .process(DecodeProcessor::new, Named.as("decode"), BUFFERS_STORE, PROGRESS_STORE);
        decoded.split(Named.as("decoded-"))
                .branch((k, v) -> v instanceof ContextSwitch, Branched.withConsumer(s -> s
                        .mapValues(v -> (ContextSwitch) v)
                        .to(topic(config, SwapstreamConfig.CONTEXT_SWITCHES), Produced.with(Serdes.String(),
                                serdes.serde(ContextSwitch.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "switches"))
                .branch((k, v) -> v instanceof ThreadInfo, Branched.withConsumer(s -> s
                        .mapValues(v -> (ThreadInfo) v)
                        .to(topic(config, SwapstreamConfig.THREADS), Produced.with(Serdes.String(),
                                serdes.serde(ThreadInfo.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "threads"))
                .branch((k, v) -> v instanceof TraceSession, Branched.withConsumer(s -> s
                        .mapValues(v -> (TraceSession) v)
                        .to(topic(config, SwapstreamConfig.SESSIONS), Produced.with(Serdes.String(),
                                serdes.serde(TraceSession.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "sessions"))
                .defaultBranch(Branched.withConsumer(s -> s
                        .mapValues(v -> ((DeadLetter) v).bytes())
                        .to(topic(config, SwapstreamConfig.DEAD_LETTERS), Produced.with(Serdes.String(), Serdes.ByteArray())),
                        "dead-letters"));
    }
}
