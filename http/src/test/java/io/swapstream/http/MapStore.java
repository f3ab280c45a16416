package io.swapstream.http;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** A key-value store read as Kafka Streams' query stores are, over a sorted map: the query APIs' tests' stores. */
record MapStore(TreeMap<String, Object> map) implements ReadOnlyKeyValueStore<String, Object> {
    @Override
    public Object get(String key) {
        return map.get(key);
    }

    @Override
    public KeyValueIterator<String, Object> range(String from, String to) {
        return iterator((from == null ? map : map.tailMap(from, true)).entrySet().stream()
                .filter(e -> to == null || e.getKey().compareTo(to) <= 0).toList().iterator());
    }

    @Override
    public KeyValueIterator<String, Object> all() {
        return iterator(List.copyOf(map.entrySet()).iterator());
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<String, Object> prefixScan(P prefix, PS prefixKeySerializer) {
        String p = (String) prefix;
        return iterator(map.tailMap(p, true).entrySet().stream().takeWhile(e -> e.getKey().startsWith(p)).toList().iterator());
    }

    @Override
    public long approximateNumEntries() {
        return map.size();
    }

    static KeyValueIterator<String, Object> iterator(Iterator<Map.Entry<String, Object>> it) {
        return new KeyValueIterator<>() {
            Map.Entry<String, Object> next = it.hasNext() ? it.next() : null;

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public KeyValue<String, Object> next() {
                KeyValue<String, Object> kv = KeyValue.pair(next.getKey(), next.getValue());
                next = it.hasNext() ? it.next() : null;
                return kv;
            }

            @Override
            public String peekNextKey() {
                return next == null ? null : next.getKey();
            }

            @Override
            public void close() { }
        };
    }
}
