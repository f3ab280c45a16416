package io.swapstream.stage;

import org.apache.kafka.streams.state.KeyValueStore;

/** What the stages do to their state stores beyond the store API's own calls. */
public final class StateStores {
    private StateStores() {}

    /**
     * Removes {@code key}: the same tombstone in the store and its changelog as
     * {@link KeyValueStore#delete}, without delete's read (and decoding) of the old value to return it,
     * which was a RocksDB get per key: most of the cost of dropping an ended session's thousands of keys.
     */
    public static <K> void remove(KeyValueStore<K, ?> store, K key) {
        store.put(key, null);
    }
}
