package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.TraceEvent;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.SchedulerSimulator;
import io.swapstream.generate.TraceGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A live session whose ingester declares the logger's flush timer ({@code ingest --flush-timer}): with CSwitch
 * events and a processor idle for 30 s, the merge lets switches out within twice the timer of the latest time
 * read (where it waited for the idle processor without it), and exactly: the rows equal the finished file's. A
 * declaration the data contradicts (a file-mode logger, whose quiet processor's buffer comes 30 s late) is
 * counted: switches out of order, never hidden.
 */
class DeclaredFlushTimerTest {
    @TempDir Path dir;
    static final long TPS = SchedulerSimulator.TICKS_PER_SECOND;

    /** What a live decode of {@code f} did: its rows, and the most the emitted switches lagged the latest time read. */
    record Live(List<SwitchRow> rows, double worstLagSeconds, long outOfOrder) {}

    static Live live(Path f, MergeLimits limits) throws Exception {
        List<SwitchRow> rows = new ArrayList<>();
        SessionDecoder d = new SessionDecoder("h", null, b -> rows.addAll(b.rows()), null, 4096, limits);
        double worst = 0;
        long[] latest = {Long.MIN_VALUE};
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) {
                r.walk((TraceEvent ev) -> latest[0] = Math.max(latest[0], ev.timestamp()));
                d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
                if (d.session() != null && d.lastEmittedNanos() != Long.MIN_VALUE && latest[0] > TraceGenerator.TS0) {
                    long latestNanos = d.session().startTimeNanos() + (latest[0] - TraceGenerator.TS0) * (1_000_000_000L / TPS);
                    worst = Math.max(worst, (latestNanos - d.lastEmittedNanos()) / 1e9);
                }
            }
        }
        d.finish();
        return new Live(rows, worst, d.counters().switchesOutOfOrder);
    }

    static Path trace(Path f, long flushTimerTicks) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withMode("cswitch").withShape(4, 2, 2).withSwitches(60_000)
                .withQuietSpell(new GeneratorOptions.QuietSpell(1, 5 * TPS, 30 * TPS)).withFlushTimer(flushTimerTicks);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        return f;
    }

    @Test
    void aTrueDeclarationLetsSwitchesOutWithinTwiceTheTimerAndExactly() throws Exception {
        Path f = trace(dir.resolve("flushed.etl"), TPS);
        List<SwitchRow> exact = new ArrayList<>();
        SessionDecoder.decodeFile(f, "h", null, exact::add, null);
        Live without = live(f, MergeLimits.live(600_000_000_000L, 1L << 30));
        Live with = live(f, MergeLimits.live(600_000_000_000L, 1L << 30).withFlushTimer(1_000));
        assertEquals(exact, with.rows(), "exact");
        assertEquals(0, with.outOfOrder());
        assertEquals(exact, without.rows());
        assertTrue(without.worstLagSeconds() > 25, "without it the merge waits for the idle processor: " + without.worstLagSeconds());
        assertTrue(with.worstLagSeconds() <= 2.5, "twice the timer, and a buffer: " + with.worstLagSeconds());
    }

    @Test
    void aDeclarationTheDataContradictsIsCountedOutOfOrder() throws Exception {
        Path f = trace(dir.resolve("file-mode.etl"), 0);
        Live with = live(f, MergeLimits.live(600_000_000_000L, 1L << 30).withFlushTimer(1_000));
        assertTrue(with.outOfOrder() > 0, "the quiet processor's late buffer came after later switches went out");
        Live without = live(f, MergeLimits.live(600_000_000_000L, 1L << 30));
        assertEquals(0, without.outOfOrder(), "undeclared, the merge waits for it");
    }
}
