package io.swapstream.decode.streams;

import static io.swapstream.schemas.SwapstreamConfig.topic;

import io.swapstream.decode.MergeLimits;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.SwitchBatchSerde;
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
 * The decode stage: {@code etw.raw-buffers} to {@code etw.switch-batches} (and, when asked,
 * {@code etw.context-switches}), {@code etw.sessions}, {@code etw.threads} and
 * {@code etw.dead-letters}. Every output is partitioned by session, like its input, so nothing is
 * repartitioned. Its state, per open session: a decoder checkpoint, the few buffers decoded since it,
 * a progress record, and buffers that came early.
 */
public final class DecodeTopology {
    private DecodeTopology() {}

    /**
     * Each session's state: its progress under the session's own key (what queries read), and under
     * longer keys its decoder's checkpoint, its redo entries (the buffers since the checkpoint, as
     * offsets of the input topic: decoded again after a restart) and buffers that came early.
     */
    public static final String PROGRESS_STORE = "decode-sessions";
    /**
     * The bytes of buffers a session decodes between two checkpoints, at most (and one more buffer), unless they
     * are fewer than 128 buffers (1 MiB buffers: 128 MiB): a restore decodes twice that again.
     */
    public static final long REDO_MAX_BYTES = 32L << 20;

    /** True when a value of the {@value #PROGRESS_STORE} store says its session has ended. */
    public static boolean hasEnded(byte[] progress) {
        return progress != null && DecodeProgress.decode(progress).ended();
    }

    public static void build(StreamsBuilder builder, Map<String, ?> config) {
        RecordSerdeFactory serdes = RecordSerdeFactory.from(config);
        int batchRows = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_BATCH_ROWS, SwapstreamConfig.DEFAULT_BATCH_ROWS);
        boolean rows = SwapstreamConfig.flag(config, SwapstreamConfig.DECODE_ROWS);
        long idle = SwapstreamConfig.longSetting(config, SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS,
                SwapstreamConfig.DEFAULT_SESSION_IDLE_TIMEOUT_MS);
        if (batchRows < 1) throw new IllegalArgumentException(SwapstreamConfig.DECODE_BATCH_ROWS + " must be at least 1");
        if (idle < 1) throw new IllegalArgumentException(SwapstreamConfig.SESSION_IDLE_TIMEOUT_MS + " must be at least 1");
        int checkpointBuffers = (int) SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS,
                SwapstreamConfig.DEFAULT_CHECKPOINT_BUFFERS);
        // the redo slots hold the buffers since the checkpoint before the last
        if (checkpointBuffers < 1 || checkpointBuffers > SwapstreamConfig.REDO_SLOTS / 2) {
            throw new IllegalArgumentException(SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS + " must be 1 to " + SwapstreamConfig.REDO_SLOTS / 2);
        }
        long retentionMs = SwapstreamConfig.sessionRetentionMs(config);
        long maxLatenessMs = SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_MAX_LATENESS_MS,
                SwapstreamConfig.DEFAULT_DECODE_MAX_LATENESS_MS);
        long maxQueueBytes = SwapstreamConfig.longSetting(config, SwapstreamConfig.DECODE_MAX_QUEUE_BYTES, MergeLimits.defaultMaxQueueBytes());
        if (maxLatenessMs < 1) throw new IllegalArgumentException(SwapstreamConfig.DECODE_MAX_LATENESS_MS + " must be at least 1");
        if (maxQueueBytes < 1024) throw new IllegalArgumentException(SwapstreamConfig.DECODE_MAX_QUEUE_BYTES + " must be at least 1024");
        MergeLimits live = MergeLimits.live(maxLatenessMs * 1_000_000L, maxQueueBytes);
        Map<String, String> bigValues = Map.of("max.message.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PROGRESS_STORE),
                Serdes.String(), Serdes.ByteArray()).withLoggingEnabled(bigValues).withCachingDisabled());
        KStream<String, Object> decoded = builder
                .stream(topic(config, SwapstreamConfig.RAW_BUFFERS), Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .process(() -> new DecodeProcessor(topic(config, SwapstreamConfig.RAW_BUFFERS), batchRows, rows, idle, checkpointBuffers,
                                retentionMs, live),
                        Named.as("decode"), PROGRESS_STORE);
        decoded.split(Named.as("decoded-"))
                .branch((k, v) -> v instanceof SwitchBatch, Branched.withConsumer(s -> s
                        .mapValues(v -> (SwitchBatch) v, Named.as("as-batch"))
                        .to(topic(config, SwapstreamConfig.SWITCH_BATCHES), Produced.with(Serdes.String(),
                                SwitchBatchSerde.forConfig(config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "batches"))
                .branch((k, v) -> v instanceof ContextSwitch, Branched.withConsumer(s -> s
                        .mapValues(v -> (ContextSwitch) v, Named.as("as-switch"))
                        .to(topic(config, SwapstreamConfig.CONTEXT_SWITCHES), Produced.with(Serdes.String(),
                                serdes.serde(ContextSwitch.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "switches"))
                .branch((k, v) -> v instanceof ThreadInfo, Branched.withConsumer(s -> s
                        .mapValues(v -> (ThreadInfo) v, Named.as("as-thread"))
                        .to(topic(config, SwapstreamConfig.THREADS), Produced.with(Serdes.String(),
                                serdes.serde(ThreadInfo.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "threads"))
                .branch((k, v) -> v instanceof TraceSession, Branched.withConsumer(s -> s
                        .mapValues(v -> (TraceSession) v, Named.as("as-session"))
                        .to(topic(config, SwapstreamConfig.SESSIONS), Produced.with(Serdes.String(),
                                serdes.serde(TraceSession.class, config)).withStreamPartitioner(new SessionPartitioner<>())),
                        "sessions"))
                .defaultBranch(Branched.withConsumer(s -> s
                        .mapValues(v -> ((DeadLetter) v).bytes(), Named.as("as-dead-letter"))
                        .to(topic(config, SwapstreamConfig.DEAD_LETTERS), Produced.with(Serdes.String(), Serdes.ByteArray())),
                        "dead-letters"));
    }
}
