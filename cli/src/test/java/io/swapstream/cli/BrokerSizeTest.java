package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.cli.kafka.BrokerCommand;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's progress line counts its records' bytes, not the preallocated index files' lengths. */
class BrokerSizeTest {
    @Test
    void onlyTheLogSegmentsCount(@TempDir Path dir) throws Exception {
        Path partition = Files.createDirectories(dir.resolve("etw.raw-buffers-0"));
        Files.write(partition.resolve("00000000000000000000.log"), new byte[123_456]);
        // as Kafka preallocates an active segment's indexes: 10 MiB long, nothing written
        for (String index : new String[] {"00000000000000000000.index", "00000000000000000000.timeindex"}) {
            try (RandomAccessFile f = new RandomAccessFile(partition.resolve(index).toFile(), "rw")) {
                f.setLength(10 << 20);
            }
        }
        Files.writeString(dir.resolve("meta.properties"), "node.id=1\n");
        assertEquals(123_456, BrokerCommand.size(dir));
    }
}
