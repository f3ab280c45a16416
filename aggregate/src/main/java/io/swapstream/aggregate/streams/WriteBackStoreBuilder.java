package io.swapstream.aggregate.streams;

import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/** Builds a {@link WriteBackStore} over a persistent, logged, uncached key-value store. */
final class WriteBackStoreBuilder<V> implements StoreBuilder<WriteBackStore<V>> {
    private final StoreBuilder<KeyValueStore<String, byte[]>> inner;

    private final WriteBackStore.Codec<V> codec;

    WriteBackStoreBuilder(String name, WriteBackStore.Codec<V> codec) {
        this.codec = codec;
        this.inner = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.ByteArray())
                .withCachingDisabled().withLoggingEnabled(Map.of());
    }

    @Override
    public StoreBuilder<WriteBackStore<V>> withCachingEnabled() { return this; }

    @Override
    public StoreBuilder<WriteBackStore<V>> withCachingDisabled() { return this; }

    @Override
    public StoreBuilder<WriteBackStore<V>> withLoggingEnabled(Map<String, String> config) {
        inner.withLoggingEnabled(config);
        return this;
    }

    @Override
    public StoreBuilder<WriteBackStore<V>> withLoggingDisabled() {
        throw new UnsupportedOperationException("the accumulators must be logged for exactly-once restarts");
    }

    @Override
    public WriteBackStore<V> build() { return new WriteBackStore<>(inner.build(), codec); }

    @Override
    public Map<String, String> logConfig() { return inner.logConfig(); }

    @Override
    public boolean loggingEnabled() { return inner.loggingEnabled(); }

    @Override
    public String name() { return inner.name(); }
}
