package io.swapstream.decode.streams;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.stage.InputRecordReader;
import io.swapstream.stage.RedoLog;
import io.swapstream.stage.StateStores;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The decode stage's state, a store per concern. Exactly-once v2 commits all of them with the outputs
 * and the input offsets, so a restore finds them as of one transaction.
 * <ul>
 *   <li>{@value #PROGRESS}: each session's {@link DecodeProgress}, under the session's key (what queries read);
 *   <li>{@value #CHECKPOINTS}: its decoder's last checkpoint (lanes, merge queue, thread table, clock), in parts of at
 *       most {@value #CHECKPOINT_PART_BYTES} bytes: a merge that waits minutes for a quiet processor holds more than a
 *       changelog record may;
 *   <li>{@value #REDO}: the buffers decoded since ({@link RedoLog});
 *   <li>{@value #EARLY}: buffers that came before their turn, whole, until the gap before them fills.
 * </ul>
 * Keys of a session's parts are the session, NUL, then the part's number: no session key holds NUL, so a prefix
 * holds one session's parts only.
 */
final class DecodeStores {
    static final String PROGRESS = "decode-sessions";
    static final String CHECKPOINTS = "decode-checkpoints";
    static final String REDO = "decode-redo";
    static final String EARLY = "decode-early";
    static final char SEPARATOR = RedoLog.SEPARATOR;
    /** A checkpoint part: well under a changelog record's limit ({@code max.message.bytes}). */
    static final int CHECKPOINT_PART_BYTES = 1 << 20;

    private final KeyValueStore<String, byte[]> progress;
    private final KeyValueStore<String, byte[]> checkpoints;
    private final RedoLog redo;
    private final KeyValueStore<String, byte[]> early;

    DecodeStores(ProcessorContext<?, ?> context, InputRecordReader inputs, String inputTopic) {
        this.progress = context.getStateStore(PROGRESS);
        this.checkpoints = context.getStateStore(CHECKPOINTS);
        this.redo = new RedoLog(context.getStateStore(REDO), inputs, inputTopic);
        this.early = context.getStateStore(EARLY);
    }

    static final String[] NAMES = {PROGRESS, CHECKPOINTS, REDO, EARLY};

    /** Adds the four stores to {@code builder}. */
    static void addTo(StreamsBuilder builder) {
        // a checkpoint holds what the merge holds: megabytes while it waits for a quiet processor
        Map<String, String> bigValues = Map.of("max.message.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES));
        for (String name : NAMES) {
            // not cached: each key is written once per buffer or checkpoint, and read back only by a restore
            builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.ByteArray())
                    .withLoggingEnabled(name.equals(PROGRESS) ? Map.of() : bigValues).withCachingDisabled());
        }
    }

    DecodeProgress progress(String session) {
        return DecodeProgress.decode(progress.get(session));
    }

    void put(String session, DecodeProgress p) {
        progress.put(session, p.encode());
    }

    /** Every session's progress, ended ones too: small records, read by the idle timeout's scan. */
    KeyValueIterator<String, byte[]> allProgress() {
        return progress.all();
    }

    /** The session leaves the stage: its progress goes (its other parts went when it ended). */
    void forget(String session) {
        StateStores.remove(progress, session);
    }

    /** The session's checkpoint, of {@code parts} parts; null when a part is missing. */
    byte[] checkpoint(String session, int parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < parts; i++) {
            byte[] part = checkpoints.get(partKey(session, i));
            if (part == null) return null;
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    /**
     * The decoder's checkpoint, taken after the buffers before {@code redoTo}: their redo entries go. Written in parts
     * (the parts of the last one beyond these go); returns how many.
     */
    int putCheckpoint(String session, byte[] checkpoint, int partsBefore, long redoFrom, long redoTo) {
        int parts = Math.max(1, (checkpoint.length + CHECKPOINT_PART_BYTES - 1) / CHECKPOINT_PART_BYTES);
        for (int i = 0; i < parts; i++) {
            int from = i * CHECKPOINT_PART_BYTES;
            checkpoints.put(partKey(session, i), java.util.Arrays.copyOfRange(checkpoint, from, Math.min(checkpoint.length, from + CHECKPOINT_PART_BYTES)));
        }
        for (int i = parts; i < partsBefore; i++) StateStores.remove(checkpoints, partKey(session, i));
        redo.drop(session, redoFrom, redoTo);
        return parts;
    }

    private static String partKey(String session, int part) {
        return session + SEPARATOR + part;
    }

    /** The buffers each session decoded since its checkpoint. */
    RedoLog redo() {
        return redo;
    }

    /** Holds buffer {@code index} apart until its turn; false when it is held already. */
    boolean holdEarly(String session, long index, byte[] bytes) {
        String key = earlyKey(session, index);
        if (early.get(key) != null) return false;
        early.put(key, bytes);
        return true;
    }

    /** Buffer {@code index} if it came early, no longer held apart; else null. */
    byte[] takeEarly(String session, long index) {
        String key = earlyKey(session, index);
        byte[] b = early.get(key);
        if (b != null) StateStores.remove(early, key);
        return b;
    }

    boolean hasEarly(String session, long index) {
        return early.get(earlyKey(session, index)) != null;
    }

    long earlyCount(String session) {
        return partKeys(early, session).size();
    }

    /** The session has ended: its checkpoint, redo entries ({@code redoFrom} to {@code redoTo}) and early buffers go. */
    void dropParts(String session, int checkpointParts, long redoFrom, long redoTo) {
        for (int i = 0; i < checkpointParts; i++) StateStores.remove(checkpoints, partKey(session, i));
        redo.drop(session, redoFrom, redoTo);
        partKeys(early, session).forEach(k -> StateStores.remove(early, k));
    }

    private static List<String> partKeys(KeyValueStore<String, byte[]> store, String session) {
        List<String> keys = new ArrayList<>();
        String prefix = session + SEPARATOR;
        try (KeyValueIterator<String, byte[]> it = store.range(prefix, prefix + '\uffff')) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    static String earlyKey(String session, long index) {
        // zero-padded: the keys sort in buffer order
        String digits = Long.toString(index);
        return session + SEPARATOR + "000000000000".substring(Math.min(12, digits.length())) + digits;
    }
}
