package io.swapstream.aggregate.streams;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * Mutable values (thread accumulators, session progress) as live objects over a logged key-value
 * store. Updating one per switch costs no serialization; the changed ones are encoded and written
 * to the inner store when Kafka Streams flushes caches, which it does in every task's
 * prepare-commit, before the transaction commits, so the store's changelog and the committed
 * input offsets always agree (exactly once). A dirty close clears the live values, which are then
 * read again from the restored store.
 *
 * <p>It implements Kafka Streams' internal {@link CachedStateStore} because that is the only hook
 * called before the transaction commits ({@code StateStore.commit} runs after it, in 4.3).
 */
public final class WriteBackStore<V> implements StateStore, CachedStateStore<String, byte[]> {
    /** How values become bytes and back. */
    public interface Codec<V> {
        byte[] encode(V value);

        V decode(byte[] bytes);

        V empty();
    }

    private final KeyValueStore<String, byte[]> inner;
    private final Codec<V> codec;
    private final Map<String, V> live = new HashMap<>();
    private final Set<String> dirty = new LinkedHashSet<>();
    private long generation;

    WriteBackStore(KeyValueStore<String, byte[]> inner, Codec<V> codec) {
        this.inner = inner;
        this.codec = codec;
    }

    /** The value under {@code key}, loaded or new; it is written back at the next flush. */
    public V get(String key) {
        V v = live.get(key);
        if (v == null) {
            byte[] b = inner.get(key);
            v = b == null ? codec.empty() : codec.decode(b);
            live.put(key, v);
        }
        dirty.add(key);
        return v;
    }

    /**
     * Changes at every write-back and clear. A caller that keeps values between calls must get
     * them again once this has moved on, so that later changes are marked for writing back.
     */
    public long generation() { return generation; }

    /** The value under {@code key}, loaded or new, for reading only: not marked for writing back. */
    public V peek(String key) {
        V v = live.get(key);
        if (v != null) return v;
        byte[] b = inner.get(key);
        return b == null ? codec.empty() : codec.decode(b);
    }

    /** Every value whose key starts with {@code prefix}, after writing changes back. */
    public List<KeyValue<String, V>> all(String prefix) {
        writeBack();
        List<KeyValue<String, V>> out = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = inner.prefixScan(prefix, new org.apache.kafka.common.serialization.StringSerializer())) {
            it.forEachRemaining(kv -> out.add(KeyValue.pair(kv.key, live.containsKey(kv.key) ? live.get(kv.key)
                    : codec.decode(kv.value))));
        }
        return out;
    }

    /** Writes changed values to the inner store and lets go of the in-memory copies when many. */
    private void writeBack() {
        generation++;
        for (String k : dirty) inner.put(k, codec.encode(live.get(k)));
        dirty.clear();
        if (live.size() > 100_000) live.clear();
    }

    @Override
    public void flushCache() {
        writeBack();
    }

    @Override
    public void clearCache() {
        generation++;
        live.clear();
        dirty.clear();
    }

    @Override
    public boolean setFlushListener(CacheFlushListener<String, byte[]> listener, boolean sendOldValues) {
        return false;
    }

    @Override
    public String name() { return inner.name(); }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        inner.init(context, root);
    }

    @Override
    @SuppressWarnings("deprecation")
    public void flush() {
        writeBack();
        inner.flush();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        writeBack();
        inner.commit(changelogOffsets);
    }

    @Override
    public Long committedOffset(TopicPartition partition) { return inner.committedOffset(partition); }

    @Override
    public boolean managesOffsets() { return inner.managesOffsets(); }

    @Override
    public void close() {
        live.clear();
        dirty.clear();
        inner.close();
    }

    @Override
    public boolean persistent() { return inner.persistent(); }

    @Override
    public boolean isOpen() { return inner.isOpen(); }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound bound, QueryConfig config) {
        return inner.query(query, bound, config);
    }

    @Override
    public Position getPosition() { return inner.getPosition(); }
}
