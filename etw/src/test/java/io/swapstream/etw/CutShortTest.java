package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file that frames whole but holds less than its logger wrote: what only its logfile header shows. */
class CutShortTest {
    static final int BUF = 4096;
    @TempDir Path dir;

    /** 300 events on 2 processors in 4 KiB buffers: the header buffer and 4 more (counted in the first test). */
    private Path written(String name, int logFileMode, boolean close) throws Exception {
        Path f = dir.resolve(name);
        EtlWriter.Session s = new EtlWriter.Session(BUF, 22621, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                132223104000000000L, 132223000000000000L, logFileMode, "L", "f.etl");
        EtlWriter w = new EtlWriter(f, s, 1000);
        for (int i = 0; i < 300; i++) w.perfInfoEvent(i % 2, 0x0524, 4, 1000 + i, null, null, new byte[24], 24);
        if (close) w.close();
        else Files.write(dir.resolve(name + ".taken"), Files.readAllBytes(f)); // as a copy taken while the logger runs
        return close ? f : dir.resolve(name + ".taken");
    }

    private static String cutShortOf(byte[] bytes) throws Exception {
        try (EtlReader r = EtlReader.of("t.etl", ByteBuffer.wrap(bytes))) {
            while (r.next()) { }
            return r.cutShort();
        }
    }

    @Test
    void aWholeFileIsNotCutShort() throws Exception {
        byte[] whole = Files.readAllBytes(written("w.etl", 1, true));
        // 150 events of 16 + 24 bytes a processor: 100 fill a buffer's 4,096 - 72 bytes, so 2 buffers each, and the
        // header's buffer, which its count includes (as in every real file)
        assertEquals(5 * BUF, whole.length);
        assertEquals(5, ByteBuffer.wrap(whole).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0x48 + 0x20 + 0x24));
        assertNull(cutShortOf(whole));
    }

    @Test
    void aFileCutAtABuffersEndSaysHowManyItLacks() throws Exception {
        byte[] whole = Files.readAllBytes(written("w.etl", 1, true));
        assertEquals("its logfile header says 5 buffers were written; the file holds 3: cut short",
                cutShortOf(Arrays.copyOf(whole, whole.length - 2 * BUF)));
    }

    @Test
    void aFileItsLoggerNeverStoppedHasNoEndTime() throws Exception {
        byte[] taken = Files.readAllBytes(written("r.etl", 1, false));
        String why = cutShortOf(taken);
        assertEquals(true, why != null && why.startsWith("its logfile header has no EndTime: its logger never stopped"), why);
    }

    @Test
    void aCircularFileSaysNothingByItsCounts() throws Exception {
        byte[] whole = Files.readAllBytes(written("c.etl", LogFileMode.FILE_MODE_CIRCULAR, true));
        assertNull(cutShortOf(Arrays.copyOf(whole, whole.length - BUF)));
    }
}
