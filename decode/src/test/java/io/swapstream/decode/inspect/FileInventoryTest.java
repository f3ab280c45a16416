package io.swapstream.decode.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loss indicators: lost-event flags, the header's counters and buffers missing from the sequence. */
class FileInventoryTest {
    @TempDir Path dir;

    @Test
    @SuppressWarnings("unchecked")
    void reportsLoss() throws Exception {
        Path f = dir.resolve("loss.etl");
        int size = 4096;
        try (EtlWriter w = new EtlWriter(f, new EtlWriter.Session(size, 19041, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                132223104000000000L, 132223000000000000L, 1, "L", "x.etl"), 100)) {
            w.setEventsLost(17);
            for (int i = 0; i < 800; i++) w.perfInfoEvent(i % 2, 0x0524, 4, 100 + i, null, null, new byte[24], 24);
        }
        byte[] b = Files.readAllBytes(f);
        int buffers = b.length / size;
        // buffers 1.. carry sequence numbers 1..; flag buffer 1 EVENTS_LOST and drop the 4th buffer of the file
        ByteBuffer v = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        v.putShort(size + 0x34, (short) (v.getShort(size + 0x34) | 0x2));
        long droppedSeq = v.getLong(3 * size + 0x18);
        int droppedCpu = v.getShort(3 * size + 0x28) & 0x7FF;
        byte[] cut = new byte[b.length - size];
        System.arraycopy(b, 0, cut, 0, 3 * size);
        System.arraycopy(b, 4 * size, cut, 3 * size, b.length - 4 * size);
        Files.write(f, cut);
        Map<String, Object> m = FileInventory.of(f, null).toMap();
        Map<String, Object> loss = (Map<String, Object>) m.get("loss");
        assertEquals(buffers - 1, m.get("buffers"));
        assertEquals(1, loss.get("eventsLostBuffers"));
        assertEquals(17L, loss.get("eventsLost"));
        Map<String, Long> gaps = (Map<String, Long>) loss.get("sequenceGapsByProcessor");
        assertEquals(1L, loss.get("missingSequenceNumbers"), "buffer " + droppedSeq + " is missing");
        assertEquals(1L, gaps.get(String.valueOf(droppedCpu)), Arrays.toString(new Object[] {droppedCpu, gaps}));
        for (long g : gaps.values()) assertEquals(true, g <= 1);
    }
}
