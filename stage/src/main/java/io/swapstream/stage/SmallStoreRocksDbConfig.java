package io.swapstream.stage;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.Options;

/**
 * RocksDB sized for what a stage's stores hold: a session's progress, a checkpoint, a few slots of
 * redo entries. RocksDB preallocates each MANIFEST at 4 MiB, which for four small stores a task is most
 * of an idle stage's disk; a MANIFEST grows in small steps instead. Named in {@code rocksdb.config.setter}.
 */
public final class SmallStoreRocksDbConfig implements RocksDBConfigSetter {
    /** MANIFEST preallocation: RocksDB appends a few hundred bytes per flush or compaction. */
    static final long MANIFEST_PREALLOCATION = 64 * 1024;

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        options.setManifestPreallocationSize(MANIFEST_PREALLOCATION);
    }

    @Override
    public void close(String storeName, Options options) {
        // nothing of its own to free: the options belong to Kafka Streams
    }
}
