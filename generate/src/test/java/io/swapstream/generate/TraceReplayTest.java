package io.swapstream.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogfileHeader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replay writes the file as its logger does: a header that has no EndTime while it runs, the finished one at the end. */
class TraceReplayTest {
    @TempDir Path dir;

    @Test
    void theHeaderHasNoEndTimeWhileTheLoggerRunsAndIsTheFinishedOneAtTheEnd() throws Exception {
        Path source = dir.resolve("whole.etl");
        TraceGenerator.generate(source, GeneratorOptions.defaults().withSwitches(5_000), 0x28);
        Path target = dir.resolve("live.etl");
        List<LogfileHeader> whileRunning = new ArrayList<>();
        TraceReplay.replay(source, target, 1e6, (i, t) -> {
            if (i == 1) whileRunning.add(header(target));
        });
        LogfileHeader running = whileRunning.get(0);
        assertEquals(0, running.endTime());
        assertEquals(1, running.buffersWritten());
        assertEquals(-1, Files.mismatch(source, target), "the finished file is the source");
        LogfileHeader finished = header(target);
        assertNotEquals(0, finished.endTime());
        assertEquals(Files.size(source) / finished.bufferSize(), finished.buffersWritten());
        try (EtlReader r = EtlReader.of("t", ByteBuffer.wrap(Files.readAllBytes(target)))) {
            while (r.next()) { }
            assertNull(r.cutShort());
        }
    }

    private static LogfileHeader header(Path f) {
        try (EtlReader r = EtlReader.open(f).framesOnly()) {
            r.next();
            return LogfileHeader.find(r.decoder());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
