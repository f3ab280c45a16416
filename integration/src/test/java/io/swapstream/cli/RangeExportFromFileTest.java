package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.etw.EtlReader;
import io.swapstream.export.RangeExport;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.RawSessionReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range export planned from a file's buffers, no broker: from a window's start, the first window's rows are the
 * whole file's, since each thread's last switch and readying before the range come with it. On this flushed trace
 * 27 of its 263 rows differed without them.
 */
class RangeExportFromFileTest {
    @TempDir Path dir;

    static RangeExport.Buffers buffersOf(Path f) {
        return sink -> {
            try (EtlReader r = EtlReader.open(f)) {
                long index = 0;
                while (r.next()) {
                    byte[] bytes = Arrays.copyOf(r.rawBytes(), r.rawLength());
                    sink.buffer(new RawSessionReader.Buffer(index++, r.bufferOffset(), bytes, r.header(), 0));
                }
            }
        };
    }

    @Test
    void aRangeFromAWindowsStartKeepsItsFirstWindow() throws Exception {
        // a live logger's file: every processor's buffer flushed each second
        GeneratorOptions o = GeneratorOptions.defaults().withMode("compact").withShape(4, 3, 3).withSwitches(300_000)
                .withBufferSize(8 * 1024).withSeed(9).withStartTime(134_000_000_000_000_000L).withFlushTimer(10_000_000L);
        Path f = dir.resolve("flushed.etl");
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        List<Long> windows = ExportIT.windowRows(f, Long.MIN_VALUE, Long.MAX_VALUE).stream().map(ExportIT::windowStart).distinct().sorted().toList();
        assertTrue(windows.size() >= 3, windows.toString());
        long from = windows.get(1);
        long to = windows.get(windows.size() - 1);
        String session = "rangehost:NT Kernel Logger:134000000000000000";
        RangeExport.Plan plan = RangeExport.plan(buffersOf(f), session, from, to);
        Path part = dir.resolve("range.etl");
        try (OutputStream out = Files.newOutputStream(part)) {
            RangeExport.write(buffersOf(f), session, plan, out);
        }
        assertTrue(Files.size(part) < Files.size(f), "the range is part of the file");
        List<String> whole = ExportIT.windowRows(f, from, to);
        assertFalse(whole.isEmpty());
        assertEquals(List.of(), ExportIT.differences(whole, ExportIT.windowRows(part, from, to)), "rows of the range's windows differ");
    }
}
