package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.merge.ExpansionCounters;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same simulated schedule in both encodings decodes to the same switches. */
class GeneratedTraceTest {
    @TempDir Path dir;

    static List<SwitchRow> decode(Path f, ExpansionCounters[] counters) throws Exception {
        List<SwitchRow> out = new ArrayList<>();
        SessionDecoder d = SessionDecoder.decodeFile(f, "h", null, out::add, null);
        counters[0] = d.counters();
        return out;
    }

    @Test
    void bothEncodingsAgreeOnEveryFieldTheCompactFormCarries() throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(30_000).withSeed(7);
        Path cs = dir.resolve("cs.etl");
        Path cc = dir.resolve("cc.etl");
        long n1 = TraceGenerator.generate(cs, o.withMode("cswitch"), MaximumWaitReason.forBuild(o.build()));
        long n2 = TraceGenerator.generate(cc, o.withMode("compact"), MaximumWaitReason.forBuild(o.build()));
        assertEquals(n1, n2);
        ExpansionCounters[] c1 = new ExpansionCounters[1];
        ExpansionCounters[] c2 = new ExpansionCounters[1];
        List<SwitchRow> a = decode(cs, c1);
        List<SwitchRow> b = decode(cc, c2);
        assertEquals(n1, a.size());
        assertEquals(n1, b.size());
        assertEquals(0, c1[0].oldThreadNotLastSwitchedIn);
        assertEquals(0, c2[0].oldThreadNotLastSwitchedIn);
        assertEquals(0, c1[0].switchesOutOfOrder + c2[0].switchesOutOfOrder);
        assertTrue(c2[0].litePackets > 0 && c2[0].fullPackets > 0 && c2[0].idlePackets > 0, c2[0].toMap().toString());
        assertEquals(o.processors(), c2[0].lastSwitchWithoutNewThread);
        int fullTicks = 0;
        for (int i = 0; i < a.size(); i++) {
            SwitchRow x = a.get(i);
            SwitchRow y = b.get(i);
            String at = "switch " + i + "\n" + x + "\n" + y;
            assertEquals(x.cpu(), y.cpu(), at);
            assertEquals(x.timestamp(), y.timestamp(), at);
            assertEquals(x.timeNanos(), y.timeNanos(), at);
            assertEquals(x.oldThreadId(), y.oldThreadId(), at);
            assertEquals(x.oldThreadPriority(), y.oldThreadPriority(), at);
            assertEquals(x.oldThreadState(), y.oldThreadState(), at);
            assertEquals(x.oldThreadWaitReason(), y.oldThreadWaitReason(), at);
            assertEquals(x.oldThreadRunNanos(), y.oldThreadRunNanos(), at);
            if (y.newThreadId() == null) continue; // the last switch of a processor
            assertEquals(x.newThreadId(), y.newThreadId(), at);
            assertEquals(x.newThreadTimeSinceLastNanos(), y.newThreadTimeSinceLastNanos(), at);
            assertNull(y.newThreadPriority());
            if (y.newThreadWaitTicks() != null && Objects.equals(y.newThreadWaitTicks(), 1L)) {
                assertTrue(x.newThreadWaitTicks() <= 1, at); // Lite: an upper bound
            } else if (y.newThreadWaitTicks() != null) {
                assertEquals(x.newThreadWaitTicks(), y.newThreadWaitTicks(), at);
                fullTicks++;
            }
        }
        assertTrue(fullTicks > 0);
    }

    @Test
    void mergedOrderIsByTimestampThenCpu() throws Exception {
        Path f = dir.resolve("m.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(5_000).withShape(8, 4, 6), 0x28);
        List<SwitchRow> s = decode(f, new ExpansionCounters[1]);
        for (int i = 1; i < s.size(); i++) {
            SwitchRow p = s.get(i - 1);
            SwitchRow q = s.get(i);
            assertTrue(p.timestamp() < q.timestamp() || (p.timestamp() == q.timestamp() && p.cpu() <= q.cpu()), "at " + i);
        }
    }
}
