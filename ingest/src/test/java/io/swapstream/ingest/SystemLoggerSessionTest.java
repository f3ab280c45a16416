package io.swapstream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogFileMode;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A trace from a system logger session of Swapstream's own name (EVENT_TRACE_SYSTEM_LOGGER_MODE, the logger
 * windows/swapstream-collect.ps1 starts) is followed as an NT Kernel Logger's is: its session id carries the
 * logger's own name, and nothing depends on "NT Kernel Logger". And what the watched folder holds, and the
 * collection script's status file, read for /metrics.
 */
class SystemLoggerSessionTest {
    @TempDir Path dir;

    private Path trace(String name, String logger, long startTime) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withSwitches(2_000).withBufferSize(8 * 1024)
                .withLoggerName(logger).withStartTime(startTime);
        Path p = dir.resolve(name);
        TraceGenerator.generate(p, o, 37);
        return p;
    }

    @Test
    void aSystemLoggerSessionsFileIsItsOwnSessionUnderItsOwnName() throws Exception {
        Path f = trace("swapstream-20261128T021000Z.etl", "Swapstream", 134_000_000_000_000_000L);
        byte[] header = new byte[BufferHeader.SIZE];
        FirstBuffer first;
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            first = FirstBuffer.read(f, "web01", ch, Files.size(f), header);
        }
        assertNull(first.notEtl());
        assertEquals("web01:Swapstream:134000000000000000", first.session());
        assertEquals("Swapstream", first.logger());
        // the header says what a system logger session's says
        EtlReader r = EtlReader.of(f.toString(), ByteBuffer.wrap(Files.readAllBytes(f))).framesOnly();
        assertTrue(r.next());
        LogfileHeader h = LogfileHeader.find(r.decoder());
        assertEquals("Swapstream", h.loggerName());
        assertTrue(LogFileMode.names(h.logFileMode()).contains("EVENT_TRACE_SYSTEM_LOGGER_MODE"), LogFileMode.names(h.logFileMode()).toString());
        // the same trace from the NT Kernel Logger (the fallback on older systems) is another session
        Path k = trace("kernel.etl", "NT Kernel Logger", 134_000_000_000_000_000L);
        try (FileChannel ch = FileChannel.open(k, StandardOpenOption.READ)) {
            FirstBuffer kf = FirstBuffer.read(k, "web01", ch, Files.size(k), header);
            assertEquals("web01:NT Kernel Logger:134000000000000000", kf.session());
        }
    }

    @Test
    void theFolderSaysItsBacklogAndEachHostsNewestFile() throws Exception {
        Path a = trace("db01.etl", "Swapstream", 134_000_000_000_000_000L);
        Path b = trace("db02.etl", "Swapstream", 134_000_000_600_000_000L);
        Files.writeString(dir.resolve("notes.txt"), "not a trace");
        Files.writeString(dir.resolve(WatchedFolder.STATUS_FILE), "result=ok\n");
        Files.createDirectories(dir.resolve("older.etl"));
        Files.setLastModifiedTime(a, FileTime.fromMillis(1_000_000));
        WatchedFolder one = WatchedFolder.scan(dir, p -> "web01");
        assertEquals(2, one.files());
        assertEquals(Files.size(a) + Files.size(b), one.bytes());
        assertEquals(1, one.newestCreatedMs().size());
        WatchedFolder each = WatchedFolder.scan(dir, WatchedFile::hostOf);
        assertEquals(Map.of("db01", Files.readAttributes(a, java.nio.file.attribute.BasicFileAttributes.class).creationTime().toMillis(),
                "db02", Files.readAttributes(b, java.nio.file.attribute.BasicFileAttributes.class).creationTime().toMillis()),
                each.newestCreatedMs());
    }

    @Test
    void theCollectorsStatusFileIsRead() throws Exception {
        assertNull(CollectorStatus.read(dir), "no status file: nothing to say");
        Files.writeString(dir.resolve(WatchedFolder.STATUS_FILE), "\uFEFFtime=2026-11-28T02:10:00Z\r\nresult=ok\r\nsession=Swapstream\r\n"
                + "events_lost=3\r\nbuffers_lost=0\r\nmessage=started swapstream-20261128T021000Z.etl\r\n");
        CollectorStatus s = CollectorStatus.read(dir);
        assertTrue(s.ok());
        assertEquals(java.time.Instant.parse("2026-11-28T02:10:00Z").toEpochMilli(), s.timeMs());
        assertEquals(3L, s.eventsLost());
        assertEquals(0L, s.buffersLost());
        assertEquals("started swapstream-20261128T021000Z.etl", s.message());
        CollectorStatus failed = CollectorStatus.parse("time=yesterday\nresult=error\nmessage=tracelog -start failed: 183\nevents_lost=\n");
        assertFalse(failed.ok());
        assertNull(failed.timeMs());
        assertNull(failed.eventsLost());
    }
}
