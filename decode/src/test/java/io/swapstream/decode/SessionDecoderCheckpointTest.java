package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.EtlReader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A decoder restored from its checkpoint after every buffer gives exactly the output of one that
 * never stopped: the checkpoint is the whole state (lanes, queue, thread table, clock, counters, the
 * lateness the session has shown), for a finished file's merge and a live session's alike.
 */
class SessionDecoderCheckpointTest {
    @TempDir Path dir;

    @ParameterizedTest(name = "{0}, {1} processors, {2}")
    @CsvSource({"compact, 4, finished", "compact, 8, finished", "cswitch, 2, finished", "compact, 4, live", "cswitch, 2, live"})
    void restoringAfterEveryBufferChangesNothing(String mode, int cpus, String merge) throws Exception {
        Path f = dir.resolve(mode + ".etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withMode(mode).withSwitches(30_000).withShape(cpus, 6, 5)
                .withSilentCpus(1), 0x28);
        MergeLimits limits = merge.equals("live") ? MergeLimits.live() : MergeLimits.finished(BufferLateness.of(f).max());
        List<SwitchRow> expected = new ArrayList<>();
        List<ThreadLabel> expectedThreads = new ArrayList<>();
        SessionDecoder whole = new SessionDecoder("h", null, b -> expected.addAll(b.rows()), expectedThreads::add, 1000, limits);
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) whole.onBuffer(r.decoder(), r.bufferOffset(), r.source());
        }
        whole.finish();

        List<SwitchRow> got = new ArrayList<>();
        List<ThreadLabel> threads = new ArrayList<>();
        int largest = 0;
        int buffers = 0;
        byte[] checkpoint = null;
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) {
                SessionDecoder d = checkpoint == null
                        ? new SessionDecoder("h", null, b -> got.addAll(b.rows()), threads::add, 1000, limits)
                        : SessionDecoder.restore(checkpoint, "h", null, b -> got.addAll(b.rows()), threads::add, 1000, limits);
                d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
                checkpoint = d.checkpoint();
                largest = Math.max(largest, checkpoint.length);
                buffers++;
            }
        }
        SessionDecoder last = SessionDecoder.restore(checkpoint, "h", null, b -> got.addAll(b.rows()), threads::add, 1000, limits);
        last.finish();
        assertEquals(expected, got);
        assertEquals(expectedThreads, threads);
        assertEquals(whole.counters().toMap(), last.counters().toMap());
        assertEquals(whole.maxLatenessNanos(), last.maxLatenessNanos());
        // one processor runs with two in the header: nothing to be late against
        if (cpus > 2) assertTrue(whole.maxLatenessNanos() > 0, "a file session's buffers come late");
        assertTrue(buffers > 5, buffers + " buffers");
    }

    /**
     * The checkpoint holds what the merge waits for and the live threads. A live session with a
     * processor that never logs waits for it up to its maximum lateness (here 2 s), so a trace four
     * times longer has checkpoints no larger.
     */
    @org.junit.jupiter.api.Test
    void theCheckpointDoesNotGrowWithTheTrace() throws Exception {
        long shorter = largestCheckpoint(100_000);
        long longer = largestCheckpoint(400_000);
        assertTrue(longer < 1.5 * shorter, "largest checkpoint " + longer + " bytes against " + shorter);
    }

    long largestCheckpoint(long switches) throws Exception {
        Path f = dir.resolve("long" + switches + ".etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(switches).withShape(8, 6, 5).withSilentCpus(1), 0x28);
        SessionDecoder d = new SessionDecoder("h", null, b -> { }, null, 4096,
                MergeLimits.live(2_000_000_000L, MergeLimits.defaultMaxQueueBytes()));
        long largest = 0;
        int n = 0;
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) {
                d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
                if (n++ % 8 == 0) largest = Math.max(largest, d.checkpoint().length);
            }
        }
        return largest;
    }
}
