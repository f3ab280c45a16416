package io.swapstream.decode.streams;

import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;

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

    /** True when a value of the {@value #PROGRESS_STORE} store says its session has ended. */
    public static boolean hasEnded(byte[] progress) {
        return progress != null && DecodeProgress.decode(progress).ended();
    }

    public static void build(StreamsBuilder builder, DecodeSettings settings) {
        DecodeTopics topics = settings.topics();
        DecodeStores.addTo(builder);
        // the session's buffers, in order, decoded by one processor per task with the session's state
        KStream<String, Object> decoded = builder.stream(topics.raw().name(), topics.raw().consumed().withName("raw-buffers"))
                .process(() -> new DecodeProcessor(settings), Named.as("decode"), DecodeStores.NAMES);
        // each output to its own sink by name, as DecodeOutputs forwards it
        topics.batches().sinkOf(decoded, DecodeOutputs.BATCHES);
        topics.switches().sinkOf(decoded, DecodeOutputs.SWITCHES);
        topics.threads().sinkOf(decoded, DecodeOutputs.THREADS);
        topics.sessions().sinkOf(decoded, DecodeOutputs.SESSIONS);
        topics.deadLetters().sinkOf(decoded, DecodeOutputs.DEAD_LETTERS);
    }
}
