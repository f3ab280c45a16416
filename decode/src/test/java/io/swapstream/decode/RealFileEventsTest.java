package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.decode.inspect.FileInventory;
import io.swapstream.decode.merge.ExpansionCounters;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.BufferFiller;
import io.swapstream.etw.EtlReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Process and thread events of the real files decode to plausible values. */
class RealFileEventsTest {
    static Path testdata() {
        Path dir = Path.of(System.getProperty("swapstream.testdata", "../../shared/testdata/etl"));
        Assumptions.assumeTrue(Files.isDirectory(dir), "real ETL files absent at " + dir + ": skipping");
        return dir;
    }

    @Test
    void processAndThreadEvents() throws Exception {
        for (String name : List.of("airbus__ShutdownPerfDiagLogger.etl", "perfview__diaghub.kernel.1.etl",
                "perfview__net.4.5.2.x64.etl")) {
            List<ProcessEvent> processes = new ArrayList<>();
            List<ThreadEvent> threads = new ArrayList<>();
            try (EtlReader r = EtlReader.open(testdata().resolve(name))) {
                while (r.next()) {
                    r.walk(ev -> {
                        if (ev.hookId() < 0) return;
                        if (ProcessEvent.handles(ev.hookId())) processes.add(ProcessEvent.decode(ev));
                        else if (ThreadEvent.handles(ev.hookId())) threads.add(ThreadEvent.decode(ev));
                    });
                }
            }
            assertFalse(processes.isEmpty(), name);
            for (ProcessEvent p : processes) {
                assertTrue(p.imageFileName().matches("[\\x20-\\x7e]*"), name + ": " + p);
                assertTrue(p.processId() >= 0 && p.processId() % 4 == 0, name + ": " + p);
            }
            assertTrue(processes.stream().anyMatch(p -> p.imageFileName().toLowerCase().endsWith(".exe")), name);
            for (ThreadEvent t : threads) {
                assertTrue(t.threadId() % 4 == 0, name + ": " + t);
                if (!t.isName()) assertTrue(t.basePriority() >= -1 && t.basePriority() <= 31, name + ": " + t);
            }
            if (!threads.isEmpty()) {
                assertTrue(threads.stream().anyMatch(t -> t.basePriority() == 8 || t.basePriority() == 9), name);
            }
        }
    }

    /** What the generator copies: the kernel leaves a buffer's room past its fill mark as 0xFF bytes. */
    @Test
    void theKernelWritesFFPastEachBuffersFillMark() throws Exception {
        long buffersWithRoom = 0;
        try (var files = Files.list(testdata())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".etl")).sorted().toList()) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(Files.readAllBytes(f)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                for (int at = 0, size; at + 0x48 <= b.limit() && (size = b.getInt(at)) > 0; at += size) {
                    int fill = Math.min(b.getInt(at + 0x30), size);
                    if (fill < size) buffersWithRoom++;
                    for (int i = at + fill; i < at + size && i < b.limit(); i++) {
                        assertEquals((byte) 0xFF, b.get(i), f.getFileName() + ": byte " + i + ", past the fill mark of the buffer at " + at);
                    }
                }
            }
        }
        assertTrue(buffersWithRoom > 100, buffersWithRoom + " buffers with room left");
    }

    /**
     * Every real file's buffers as the ingester publishes them (up to the fill mark where the rest is
     * filler): the decode stage walks the same events in each as in the file, and padding gives back
     * the file's bytes.
     */
    @Test
    void buffersPublishedWithoutTheirFillerDecodeAndRestoreAsInTheFile() throws Exception {
        long fileBytes = 0;
        long published = 0;
        try (var files = Files.list(testdata())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".etl")).sorted().toList()) {
                BufferDecoder decoder = new BufferDecoder();
                try (EtlReader r = EtlReader.open(f)) {
                    while (r.next()) {
                        byte[] raw = java.util.Arrays.copyOf(r.rawBytes(), r.rawLength());
                        byte[] value = java.util.Arrays.copyOf(raw, BufferFiller.publishedLength(raw, raw.length, r.header()));
                        String where = f.getFileName() + ", buffer at " + r.bufferOffset();
                        if (!r.header().compressed()) assertEquals(Math.min(r.header().fillMark(), raw.length), value.length, where);
                        List<String> inFile = new ArrayList<>();
                        r.walk(ev -> inFile.add(ev.offset() + "/" + ev.hookId() + "/" + ev.timestamp()));
                        List<String> asPublished = new ArrayList<>();
                        decoder.loadPublished(f.toString(), r.bufferOffset(), value, 0, value.length);
                        decoder.walk(ev -> asPublished.add(ev.offset() + "/" + ev.hookId() + "/" + ev.timestamp()));
                        assertEquals(inFile, asPublished, where);
                        org.junit.jupiter.api.Assertions.assertArrayEquals(raw, BufferFiller.restore(value, r.header().bufferSize()), where);
                        fileBytes += raw.length;
                        published += value.length;
                    }
                    // each was stopped by its logger: its header counts every buffer and has its EndTime
                    assertEquals(null, r.cutShort(), f.getFileName().toString());
                }
            }
        }
        assertTrue(published < fileBytes * 0.97, published + " bytes published of " + fileBytes);
    }

    /**
     * Every real file through the time-ordered merge, walked first for its lateness as the offline
     * commands do: nothing out of order, nothing late, nothing forced out, though buffers of these
     * files come up to 12.4 s late. Live, waiting for each processor's own buffers, the same.
     */
    @Test
    void theMergeKeepsRealFilesInTimeOrder() throws Exception {
        try (var files = Files.list(testdata())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".etl")).sorted().toList()) {
                ExpansionCounters c = SessionDecoder.decodeFile(f, "h", null, s -> { }, null).counters();
                assertEquals(0, c.switchesOutOfOrder, f.toString());
                assertEquals(0, c.lateEvents, f + ": " + c.toMap());
                assertEquals(0, c.queueLimitForced, f.toString());
                SessionDecoder live = new SessionDecoder("h", null, b -> { }, null, 4096, MergeLimits.live());
                try (EtlReader r = EtlReader.open(f)) {
                    while (r.next()) live.onBuffer(r.decoder(), r.bufferOffset(), r.source());
                }
                live.finish();
                assertEquals(0, live.counters().lateEvents, f + " live: " + live.counters().toMap());
            }
        }
    }

    /**
     * {@code inspect} on a kernel file written without a flush timer: three processors' first buffers
     * reach the file about 12.4 s after processor 1's later events (counting kernel trace headers).
     */
    @Test
    @SuppressWarnings("unchecked")
    void inspectShowsHowLateEachProcessorsBuffersCame() throws Exception {
        FileInventory inv = FileInventory.of(testdata().resolve("perfview__diaghub.kernel.1.etl"), null);
        Map<String, Object> lateness = (Map<String, Object>) inv.toMap().get("lateness");
        Map<String, Map<String, Object>> byCpu = (Map<String, Map<String, Object>>) lateness.get("byProcessor");
        assertEquals(12.373, (double) byCpu.get("0").get("seconds"), 0.0005);
        assertEquals(4L, byCpu.get("0").get("buffer"));
        assertEquals(12.386, (double) byCpu.get("2").get("seconds"), 0.0005);
        assertEquals(8L, byCpu.get("2").get("buffer"));
        assertEquals(12.364, (double) byCpu.get("3").get("seconds"), 0.0005);
        assertEquals(3L, byCpu.get("3").get("buffer"));
        // processor 1 wrote the first buffers, on time; late only at the session's end
        assertTrue((double) byCpu.get("1").get("seconds") < 1, byCpu.toString());
        assertEquals(12.386, (double) lateness.get("maxSeconds"), 0.0005);
        assertEquals(8L, lateness.get("maxBuffer"));
    }
}
