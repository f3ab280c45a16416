package io.swapstream.stage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.Options;

class SmallStoreRocksDbConfigTest {
    @Test
    void aStoreDoesNotPreallocateAManifestOfMegabytes() {
        try (Options options = new Options()) {
            assertTrue(options.manifestPreallocationSize() >= 4L << 20, "RocksDB's own default, which an idle stage pays per store");
            new SmallStoreRocksDbConfig().setConfig("decode-redo", options, Map.of());
            assertEquals(SmallStoreRocksDbConfig.MANIFEST_PREALLOCATION, options.manifestPreallocationSize());
        }
    }
}
