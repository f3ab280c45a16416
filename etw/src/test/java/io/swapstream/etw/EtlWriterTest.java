package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EtlWriterTest {
    @TempDir Path dir;

    @Test
    void writtenEventsReadBackInPerProcessorBuffers() throws Exception {
        Path f = dir.resolve("w.etl");
        EtlWriter.Session s = new EtlWriter.Session(4096, 22621, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                132223104000000000L, 132223000000000000L, 1, "L", "f.etl");
        try (EtlWriter w = new EtlWriter(f, s, 1000)) {
            for (int i = 0; i < 300; i++) {
                w.perfInfoEvent(i % 2, 0x0524, 4, 1000 + i, i % 3 == 0 ? new long[] {i, 2L * i} : null,
                        i % 5 == 0 ? (long) i : null, new byte[24], 24);
            }
        }
        assertEquals(0, Files.size(f) % 4096);
        List<long[]> seen = new ArrayList<>();
        int buffers = 0;
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) {
                buffers++;
                int cpu = r.header().processor();
                r.walk(ev -> {
                    if (ev.hookId() == 0x0524) {
                        long i = ev.timestamp() - 1000;
                        assertEquals(i % 2, cpu);
                        assertEquals(i % 3 == 0 ? 2 : 0, ev.pmcCount());
                        if (i % 3 == 0) assertEquals(2 * i, ev.pmcCounter(1));
                        assertEquals(i % 5 == 0, ev.hasPebsIndex());
                        assertEquals(24, ev.payloadLength());
                        seen.add(new long[] {i});
                    }
                });
            }
        }
        assertEquals(300, seen.size());
        assertTrue(buffers > 3, "events spill over several 4 KiB buffers per processor");
        // as the kernel leaves a buffer's room past its fill mark (all 19 real files' buffers): 0xFF
        byte[] bytes = Files.readAllBytes(f);
        for (int at = 0; at < bytes.length; at += 4096) {
            int fill = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(at + 0x30);
            assertTrue(fill < 4096, "buffer at " + at + " has room left");
            for (int i = at + fill; i < at + 4096; i++) assertEquals((byte) 0xFF, bytes[i], "byte " + i + ", past the fill mark " + fill);
        }
    }
}
