package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.event.CSwitchEvent;
import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.decode.merge.ExpansionCounters;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.KernelEnums;
import io.swapstream.etw.LoggerTiming;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.ScheduleRecorder;
import io.swapstream.generate.SwitchDetail;
import io.swapstream.generate.TraceGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Generated traces written as the kernel writes them decode to exactly what the simulated scheduler
 * decided, in time order: every switch, its new thread and its derived times, worked out from the
 * decisions by {@link ScheduleRecorder}, not by the decoder. Both ways a session writes: to a file
 * (no flush timer: a buffer when it is full, a quiet processor's seconds late) and with a 1 s flush
 * timer (a real-time or flushed session); batches at flush time, after the events their processor
 * logged meanwhile.
 */
class GeneratedTraceOrderTest {
    @TempDir Path dir;

    /** The generator's clock: 10 MHz, 100 ns a tick. */
    static final long NANOS_PER_TICK = 100;
    static final long SECOND = 10_000_000L;
    /** What a session with a 1 s flush timer guarantees: every event is in the trace this soon. */
    static final long FLUSHED_WRITE_DELAY = LoggerTiming.flushedWriteDelayTicks(LoggerTiming.DEFAULT_TIMER_RESOLUTION, SECOND);

    record Decoded(List<SwitchRow> switches, List<Long> eventTimes, ExpansionCounters counters) {}

    /** A finished file, as the offline commands decode it. */
    static Decoded decode(Path f) throws Exception {
        List<SwitchRow> out = new ArrayList<>();
        List<Long> threads = new ArrayList<>();
        SessionDecoder d = SessionDecoder.decodeFile(f, "h", null, out::add, t -> threads.add(0L));
        return new Decoded(out, threads, d.counters());
    }

    /** The same buffers as a live session, which knows nothing of the lateness still to come. */
    static Decoded decodeLive(Path f, MergeLimits limits) throws Exception {
        List<SwitchRow> out = new ArrayList<>();
        SessionDecoder d = new SessionDecoder("h", null, b -> out.addAll(b.rows()), null, 4096, limits);
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
        }
        d.finish();
        return new Decoded(out, List.of(), d.counters());
    }

    static GeneratorOptions flushed(GeneratorOptions o, String flush) {
        return flush.equals("file") ? o : o.withFlushTimer(SECOND);
    }

    /** What must hold of every decoded session. */
    static void assertTimeOrdered(Decoded d) {
        List<SwitchRow> s = d.switches();
        for (int i = 0; i < s.size(); i++) {
            SwitchRow x = s.get(i);
            int n = i;
            if (i > 0) assertTrue(s.get(i - 1).timestamp() <= x.timestamp(), () -> "switch " + n + " goes back in time: " + x);
            assertTrue(x.newThreadTimeSinceLastNanos() == null || x.newThreadTimeSinceLastNanos() >= 0, () -> "switch " + n + ": " + x);
            assertTrue(x.oldThreadRunNanos() == null || x.oldThreadRunNanos() >= 0, () -> "switch " + n + ": " + x);
            assertTrue(x.newThreadReadyNanos() == null || x.newThreadReadyNanos() >= 0, () -> "switch " + n + ": " + x);
            assertTrue(x.newThreadWaitsNanos() == null || x.newThreadWaitsNanos() >= 0, () -> "switch " + n + ": " + x);
            if (x.newThreadWaitsNanos() != null) {
                // Waits and Ready add up to the time since the last switch-out
                assertEquals(x.newThreadTimeSinceLastNanos(), x.newThreadWaitsNanos() + x.newThreadReadyNanos(), () -> "switch " + n + ": " + x);
            }
        }
        assertEquals(0, d.counters().switchesOutOfOrder, d.counters().toMap().toString());
        assertEquals(0, d.counters().lateEvents, d.counters().toMap().toString());
        assertEquals(0, d.counters().queueLimitForced, d.counters().toMap().toString());
    }

    /** Decoded rows against the decisions; a row whose new thread was emitted unknown may name none. */
    static void assertMatchesSchedule(Decoded d, List<ScheduleRecorder.Switch> truth) {
        List<SwitchRow> got = d.switches();
        assertEquals(truth.size(), got.size());
        Map<Integer, Integer> lastIndexOnCpu = new HashMap<>();
        for (int i = 0; i < truth.size(); i++) lastIndexOnCpu.put(truth.get(i).cpu(), i);
        long unnamed = 0;
        long readies = 0;
        long readied = 0;
        for (int i = 0; i < truth.size(); i++) {
            ScheduleRecorder.Switch t = truth.get(i);
            SwitchRow s = got.get(i);
            int n = i;
            java.util.function.Supplier<String> at = () -> "switch " + n + "\n  decided " + t + "\n  decoded " + s;
            assertEquals(t.cpu(), s.cpu(), at);
            assertEquals(t.ts(), s.timestamp(), at);
            assertEquals(t.oldTid(), s.oldThreadId(), at);
            if (s.newThreadId() == null) {
                if (lastIndexOnCpu.get(t.cpu()) != i) unnamed++;
            } else {
                assertEquals(t.newTid(), s.newThreadId(), at);
            }
            if (t.oldTid() != 0) {
                assertEquals(t.oldPriority(), s.oldThreadPriority(), at);
                assertEquals(KernelEnums.threadState(t.oldState()), s.oldThreadState(), at);
                assertEquals(t.oldState() == 5 ? KernelEnums.waitReason(t.oldWaitReason()) : null, s.oldThreadWaitReason(), at);
            }
            assertEquals(t.oldThreadRun() == null ? null : t.oldThreadRun() * NANOS_PER_TICK, s.oldThreadRunNanos(), at);
            // what only CSwitch events carry, as the simulator decided it; nothing from compact packets
            boolean cswitch = SwitchRow.CSWITCH.equals(s.source());
            SwitchDetail detail = t.detail();
            assertEquals(cswitch && t.oldTid() == 0 ? detail.previousCStateOrRank() : null, s.previousCState(), at);
            assertEquals(cswitch && t.oldTid() != 0 ? detail.previousCStateOrRank() : null, s.oldThreadRank(), at);
            assertEquals(cswitch ? detail.newThreadPriorityDecrement() : null, s.newThreadPriorityDecrement(), at);
            assertEquals(cswitch ? detail.oldThreadIdealProcessor() : null, s.oldThreadIdealProcessor(), at);
            assertEquals(cswitch ? detail.oldThreadRemainingQuantum() : null, s.oldThreadRemainingQuantum(), at);
            if (s.newThreadId() != null || t.newTid() == 0) {
                assertEquals(t.newThreadTimeSinceLast() == null ? null : t.newThreadTimeSinceLast() * NANOS_PER_TICK,
                        s.newThreadTimeSinceLastNanos(), at);
                assertEquals(t.newThreadReady() == null ? null : t.newThreadReady() * NANOS_PER_TICK, s.newThreadReadyNanos(), at);
                assertEquals(t.newThreadWaits() == null ? null : t.newThreadWaits() * NANOS_PER_TICK, s.newThreadWaitsNanos(), at);
                if (!(s.readyingThreadId() == null && t.readier() != null && readierNeverNamed(truth, lastIndexOnCpu, t))) {
                    assertEquals(t.readier(), s.readyingThreadId(), at);
                }
                if (t.newThreadReady() != null) readies++;
                if (t.readier() != null) readied++;
            }
        }
        assertEquals(d.counters().switchesBeforeNewThreadKnown, unnamed);
        if (d.counters().switches > 2000) {
            // the schedule has both kinds of ready time: woken by a thread, and preempted or by a DPC
            assertTrue(readied > 0 && readies > readied, readies + " ready times, " + readied + " with a readying thread");
        }
    }

    /**
     * The readier of {@code t} ran, when it readied the thread, on a processor whose last switch brought
     * it in: a compact trace never names that thread (docs/etw-formats.md §5.2), so no readier is known.
     */
    static boolean readierNeverNamed(List<ScheduleRecorder.Switch> truth, Map<Integer, Integer> lastIndexOnCpu,
                                     ScheduleRecorder.Switch t) {
        long readyAt = t.ts() - t.newThreadReady();
        for (int last : lastIndexOnCpu.values()) {
            ScheduleRecorder.Switch l = truth.get(last);
            if (l.newTid() == t.readier() && l.ts() <= readyAt) return true;
        }
        return false;
    }

    static List<ScheduleRecorder.Switch> generate(Path f, GeneratorOptions o) throws Exception {
        ScheduleRecorder decided = new ScheduleRecorder();
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()), decided);
        return decided.inTimeOrder();
    }

    /**
     * The most items (switches and ReadyThread events) whose times fall within {@code delay} of each
     * other, plus the most items one buffer holds: the merge lets items out once per buffer.
     */
    static long mostWithin(long delay, Decoded d, Path f) throws Exception {
        List<Long> times = new ArrayList<>();
        for (SwitchRow s : d.switches()) times.add(s.timestamp());
        long largestBuffer = 0;
        try (EtlReader r = EtlReader.open(f)) {
            while (r.next()) {
                long[] items = {0};
                r.walk(ev -> {
                    if (ev.hookId() == ReadyThread.HOOK_ID) {
                        times.add(ev.timestamp());
                        items[0]++;
                    } else if (ev.hookId() == CompactBatchDecoder.HOOK_ID) {
                        CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), 0x28,
                                (k, t, o, p, st, w, nw, i) -> items[0]++);
                    } else if (ev.hookId() == CSwitchEvent.HOOK_ID) {
                        items[0]++;
                    }
                });
                largestBuffer = Math.max(largestBuffer, items[0]);
            }
        }
        times.sort(null);
        long most = 0;
        for (int i = 0, j = 0; i < times.size(); i++) {
            while (times.get(i) - times.get(j) > delay) j++;
            most = Math.max(most, i - j + 1);
        }
        return most + largestBuffer;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"file", "1s"})
    void theGeneratorWritesAsTheKernelDoes(String flush) throws Exception {
        Path f = dir.resolve("kernel-order.etl");
        GeneratorOptions o = flushed(GeneratorOptions.defaults().withSwitches(60_000).withSeed(11), flush);
        generate(f, o);
        Map<Integer, Long> lastEvent = new HashMap<>();
        Map<Integer, Long> lastPacket = new HashMap<>();
        Map<Integer, List<Long>> threadEventsSinceBatch = new HashMap<>();
        long[] counts = new long[5]; // thread events before older packets, batches logged after their last packet, batches, late items, ReadyThread events before older packets
        Map<Integer, List<Long>> readiesSinceBatch = new HashMap<>();
        Map<Integer, Integer> notFull = new HashMap<>();
        long[] frontier = {Long.MIN_VALUE};
        try (EtlReader r = EtlReader.open(f)) {
            r.next(); // the header buffer
            while (r.next()) {
                int cpu = r.header().processor();
                // a processor's buffer that is not its last: full, unless a flush timer wrote it
                if (notFull.containsKey(cpu)) assertTrue(!flush.equals("file") || notFull.get(cpu) < 1024, "cpu " + cpu + " wrote a buffer "
                        + notFull.get(cpu) + " bytes short of full with no flush timer");
                notFull.put(cpu, o.bufferSize() - r.header().fillMark());
                long writtenBefore = frontier[0];
                long[] bufferMax = {Long.MIN_VALUE};
                r.walk(ev -> {
                    long ts = ev.timestamp();
                    bufferMax[0] = Math.max(bufferMax[0], ts);
                    if (writtenBefore != Long.MIN_VALUE && writtenBefore - ts > FLUSHED_WRITE_DELAY) counts[3]++;
                    // everything but packets is written in time order on its processor, the batch itself too
                    assertTrue(ts >= lastEvent.getOrDefault(cpu, Long.MIN_VALUE), "cpu " + cpu + " event at " + ts);
                    lastEvent.put(cpu, ts);
                    if (ThreadEvent.handles(ev.hookId())) threadEventsSinceBatch.computeIfAbsent(cpu, c -> new ArrayList<>()).add(ts);
                    if (ev.hookId() == ReadyThread.HOOK_ID) readiesSinceBatch.computeIfAbsent(cpu, c -> new ArrayList<>()).add(ts);
                    if (ev.hookId() != CompactBatchDecoder.HOOK_ID) return;
                    counts[2]++;
                    List<Long> packets = new ArrayList<>();
                    CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), 0x28,
                            (k, t, o2, p, st, w, nw, i) -> packets.add(t));
                    assertTrue(packets.get(0) >= lastPacket.getOrDefault(cpu, Long.MIN_VALUE), "packets of cpu " + cpu + " go back");
                    long last = packets.get(packets.size() - 1);
                    assertTrue(ts >= last, "a batch is logged after its last switch");
                    if (ts > last) counts[1]++;
                    lastPacket.put(cpu, last);
                    if (writtenBefore != Long.MIN_VALUE && writtenBefore - packets.get(0) > FLUSHED_WRITE_DELAY) counts[3]++;
                    for (long e : threadEventsSinceBatch.getOrDefault(cpu, List.of())) {
                        if (packets.get(0) < e) counts[0]++;
                    }
                    threadEventsSinceBatch.remove(cpu);
                    for (long e : readiesSinceBatch.getOrDefault(cpu, List.of())) {
                        if (packets.get(0) < e) counts[4]++;
                    }
                    readiesSinceBatch.remove(cpu);
                });
                frontier[0] = Math.max(frontier[0], bufferMax[0]);
            }
        }
        assertTrue(counts[0] > 0, "some thread events precede, in their buffer, a batch with older switches");
        assertTrue(counts[4] > 0, "ReadyThread events precede, in their buffer, a batch with older switches");
        if (flush.equals("file")) {
            // the batch age is checked at the next switch only: most batches are flushed by it, at its time
            assertTrue(counts[2] > 0);
            assertTrue(BufferLateness.of(f).max() > 0, "a file session's buffers come late");
        } else {
            assertTrue(counts[1] > counts[2] / 2, "most batches are logged after their last switch: " + counts[1] + " of " + counts[2]);
            assertEquals(0, counts[3], "everything reaches the trace within a flushed session's write delay");
        }
    }

    @ParameterizedTest(name = "seed {0}, {1} processors, {2}")
    @CsvSource({"1, 2, file", "2, 4, file", "3, 8, file", "4, 16, file", "1, 2, 1s", "3, 8, 1s"})
    void compactTracesWithThreadEventsDecodeToTheSchedule(long seed, int cpus, String flush) throws Exception {
        Path f = dir.resolve("c" + cpus + ".etl");
        GeneratorOptions o = flushed(GeneratorOptions.defaults().withSwitches(40_000).withSeed(seed).withShape(cpus, 6, 5), flush);
        List<ScheduleRecorder.Switch> truth = generate(f, o);
        Decoded d = decode(f);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
        assertEquals(0, d.counters().switchesBeforeNewThreadKnown);
        assertTrue(d.counters().threadEvents > 0);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"file", "1s"})
    void cswitchTracesDecodeToTheScheduleToo(String flush) throws Exception {
        Path f = dir.resolve("cs.etl");
        List<ScheduleRecorder.Switch> truth = generate(f, flushed(GeneratorOptions.defaults().withSwitches(20_000).withMode("cswitch"), flush));
        Decoded d = decode(f);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
    }

    @Test
    void processorsThatNeverLogDoNotHoldBackTheMerge() throws Exception {
        Path f = dir.resolve("silent.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(250_000).withShape(8, 6, 5).withSilentCpus(2).withSeed(5);
        List<ScheduleRecorder.Switch> truth = generate(f, o);
        Decoded d = decode(f);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
        assertTrue(d.switches().stream().noneMatch(s -> s.cpu() >= 6), "processors 6 and 7 never run anything");
        long lateness = BufferLateness.of(f).max();
        long span = d.switches().get(d.switches().size() - 1).timestamp() - d.switches().get(0).timestamp();
        assertTrue(span > 4 * lateness, "the trace spans " + span + " ticks, its buffers at most " + lateness + " late");
        // waiting only for what the file's lateness says may still come
        long bound = mostWithin(lateness, d, f) + d.counters().threadEvents + d.counters().processEvents;
        assertTrue(d.counters().peakQueued <= bound, d.counters().peakQueued + " queued, bound " + bound);
        assertTrue(d.counters().peakQueued < d.switches().size() / 2, d.counters().toMap().toString());
    }

    /**
     * A processor idle for 40 s in a file session keeps its buffer that long: it reaches the file
     * more than 30 s after later events of the others. A finished file still decodes exactly, to the
     * same rows as the same schedule written with a 1 s flush timer, holding no more than its
     * lateness; a live session waits for it within its maximum lateness, and past a shorter one counts
     * the switches that come out of order and gives them no derived times.
     */
    @Test
    void anIdleProcessorsLateBufferIsWaitedFor() throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(40_000).withShape(4, 2, 2).withSeed(8)
                .withQuietSpell(new GeneratorOptions.QuietSpell(1, 5 * SECOND, 40 * SECOND));
        Path file = dir.resolve("idle-file.etl");
        Path timed = dir.resolve("idle-1s.etl");
        List<ScheduleRecorder.Switch> truth = generate(file, o);
        assertEquals(truth, generate(timed, o.withFlushTimer(SECOND)), "the flush timer changes no decision");
        BufferLateness late = BufferLateness.of(file);
        assertTrue(late.max() >= 30 * SECOND, "the idle processor's buffer is " + late.max() / (double) SECOND + " s late");
        assertTrue(BufferLateness.of(timed).max() <= FLUSHED_WRITE_DELAY, "with a flush timer, " + BufferLateness.of(timed).max() + " ticks");

        Decoded d = decode(file);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
        assertEquals(0, d.counters().switchesBeforeNewThreadKnown);
        assertEquals(decode(timed).switches(), d.switches());
        long bound = mostWithin(late.max(), d, file) + d.counters().threadEvents + d.counters().processEvents;
        assertTrue(d.counters().peakQueued <= bound, d.counters().peakQueued + " queued, bound " + bound);

        // live, within the default 60 s: the merge waits for the processor's own buffer
        Decoded live = decodeLive(file, MergeLimits.live());
        assertTimeOrdered(live);
        assertEquals(d.switches(), live.switches());

        // live, with 10 s: the late switches are counted and have no derived times
        Decoded forced = decodeLive(file, MergeLimits.live(10_000_000_000L, MergeLimits.defaultMaxQueueBytes()));
        assertTrue(forced.counters().latenessLimitForced > 0, forced.counters().toMap().toString());
        assertTrue(forced.counters().switchesOutOfOrder > 0, forced.counters().toMap().toString());
        assertEquals(truth.size(), forced.switches().size());
        long max = Long.MIN_VALUE;
        long outOfOrder = 0;
        for (SwitchRow s : forced.switches()) {
            assertTrue(s.newThreadTimeSinceLastNanos() == null || s.newThreadTimeSinceLastNanos() >= 0, s::toString);
            assertTrue(s.oldThreadRunNanos() == null || s.oldThreadRunNanos() >= 0, s::toString);
            assertTrue(s.newThreadReadyNanos() == null || s.newThreadReadyNanos() >= 0, s::toString);
            assertTrue(s.newThreadWaitsNanos() == null || s.newThreadWaitsNanos() >= 0, s::toString);
            if (s.timestamp() < max) {
                outOfOrder++;
                assertNull(s.newThreadTimeSinceLastNanos(), s::toString);
                assertNull(s.oldThreadRunNanos(), s::toString);
                assertNull(s.newThreadReadyNanos(), s::toString);
                assertNull(s.newThreadWaitsNanos(), s::toString);
            }
            max = Math.max(max, s.timestamp());
        }
        assertEquals(forced.counters().switchesOutOfOrder, outOfOrder);
    }
}
