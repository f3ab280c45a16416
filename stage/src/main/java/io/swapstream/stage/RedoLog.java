package io.swapstream.stage;

import io.swapstream.schemas.SwapstreamConfig;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * What a stage's task takes again after a restart: the input records a session took since its last
 * checkpoint (decode) or write of its accumulators (aggregate). A stage keeps each session's state in
 * its stores as of that point, and notes each record taken since as an entry ({@link InputRecordReader}:
 * a reference to the input topic, or a copy), in {@value SwapstreamConfig#REDO_SLOTS} reused slots so
 * the store's changelog compacts to them however long a session runs. A restore rebuilds the session
 * from its state, then {@link #replay}s the entries in order, sending nothing: exactly-once v2 committed
 * their outputs with the entries.
 */
public final class RedoLog {
    /** Keys of a session's entries are the session, NUL, then the slot: no session key holds NUL. */
    public static final char SEPARATOR = '\u0000';

    /**
     * When a session's entries are due a checkpoint: {@code records} of them, or {@code bytes} of records
     * once there are {@code minRecordsForBytes} (a checkpoint costs its encoding, so large records do not
     * bring one each).
     */
    public record Limit(int records, long bytes, int minRecordsForBytes) {
        public Limit {
            if (records < 1 || records > SwapstreamConfig.REDO_SLOTS) {
                throw new IllegalArgumentException("a redo log holds 1 to " + SwapstreamConfig.REDO_SLOTS + " records, not " + records);
            }
        }

        public boolean reached(long taken, long takenBytes) {
            return taken >= records || takenBytes >= bytes && taken >= minRecordsForBytes;
        }
    }

    /** Takes a replayed record's value. */
    @FunctionalInterface
    public interface Taker {
        void take(long index, byte[] value);
    }

    private final KeyValueStore<String, byte[]> store;
    private final InputRecordReader reader;
    private final String topic;

    /**
     * @param store  the stage's redo store
     * @param reader reads referenced records back from {@code topic}
     * @param topic  the stage's input topic
     */
    public RedoLog(KeyValueStore<String, byte[]> store, InputRecordReader reader, String topic) {
        this.store = store;
        this.reader = reader;
        this.topic = topic;
    }

    /** Notes the session's record {@code index}, taken: {@code entry} is {@link InputRecordReader#reference} or {@link InputRecordReader#copy}. */
    public void note(String session, long index, byte[] entry) {
        store.put(key(session, index), entry);
    }

    /** The session's state now holds records before {@code to}: the entries from {@code from} go. */
    public void drop(String session, long from, long to) {
        for (long i = from; i < to; i++) StateStores.remove(store, key(session, i));
    }

    /** Gives {@code taker} the values of the session's records {@code from} to {@code to}, in order. */
    public void replay(String session, long from, long to, Taker taker) {
        for (long i = from; i < to; i++) {
            byte[] entry = store.get(key(session, i));
            if (entry == null) {
                throw new IllegalStateException("record " + i + " of session " + session + " is missing from the redo log (its state holds"
                        + " records before " + from + ", and " + (to - from) + " were taken since)");
            }
            taker.take(i, reader.value(topic, entry));
        }
    }

    static String key(String session, long index) {
        return session + SEPARATOR + (index % SwapstreamConfig.REDO_SLOTS);
    }
}
