package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.ScheduleRecorder;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.etw.EtlReader;
import io.swapstream.schemas.etw.LoggerTiming;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Generated traces written as the kernel writes them (batches at flush time, after the events
 * their processor logged meanwhile) decode to exactly what the simulated scheduler decided, in
 * time order: every switch, its new thread and its derived times, worked out from the decisions
 * by {@link ScheduleRecorder}, not by the decoder.
 */
class GeneratedTraceOrderTest {
    @TempDir Path dir;

    /** The generator's clock: 10 MHz, 100 ns a tick. */
    static final long NANOS_PER_TICK = 100;
    static final long WRITE_DELAY = LoggerTiming.maxWriteDelayTicks(LoggerTiming.DEFAULT_TIMER_RESOLUTION, 10_000_000L);

    record Decoded(List<ContextSwitch> switches, List<Long> eventTimes, ExpansionCounters counters) {}

    static Decoded decode(Path f) throws Exception {
        List<ContextSwitch> out = new ArrayList<>();
        List<Long> threads = new ArrayList<>();
        SessionDecoder d = SessionDecoder.decodeFile(f, "h", null, out::add, t -> threads.add(0L));
        return new Decoded(out, threads, d.counters());
    }

    /** What must hold of every decoded session. */
    static void assertTimeOrdered(Decoded d) {
        List<ContextSwitch> s = d.switches();
        for (int i = 0; i < s.size(); i++) {
            ContextSwitch x = s.get(i);
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
        assertEquals(0, d.counters().emittedOutOfOrder, d.counters().toMap().toString());
        assertEquals(0, d.counters().lateEvents, d.counters().toMap().toString());
        assertEquals(0, d.counters().queueLimitForced, d.counters().toMap().toString());
    }

    /** Decoded rows against the decisions; a row whose new thread was emitted unknown may name none. */
    static void assertMatchesSchedule(Decoded d, List<ScheduleRecorder.Switch> truth) {
        List<ContextSwitch> got = d.switches();
        assertEquals(truth.size(), got.size());
        Map<Integer, Integer> lastIndexOnCpu = new HashMap<>();
        for (int i = 0; i < truth.size(); i++) lastIndexOnCpu.put(truth.get(i).cpu(), i);
        long unnamed = 0;
        long readies = 0;
        long readied = 0;
        for (int i = 0; i < truth.size(); i++) {
            ScheduleRecorder.Switch t = truth.get(i);
            ContextSwitch s = got.get(i);
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
            if (s.newThreadId() != null || t.newTid() == 0) {
                assertEquals(t.newThreadTimeSinceLast() == null ? null : t.newThreadTimeSinceLast() * NANOS_PER_TICK,
                        s.newThreadTimeSinceLastNanos(), at);
                assertEquals(t.newThreadReady() == null ? null : t.newThreadReady() * NANOS_PER_TICK, s.newThreadReadyNanos(), at);
                assertEquals(t.newThreadWaits() == null ? null : t.newThreadWaits() * NANOS_PER_TICK, s.newThreadWaitsNanos(), at);
                assertEquals(t.readier(), s.readyingThreadId(), at);
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

    static List<ScheduleRecorder.Switch> generate(Path f, GeneratorOptions o) throws Exception {
        ScheduleRecorder decided = new ScheduleRecorder();
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()), decided);
        return decided.inTimeOrder();
    }

    /**
     * The most items (switches and ReadyThread events) whose times fall within one write delay of
     * each other, plus the most items one buffer holds: the merge lets items out once per buffer.
     */
    static long mostWithinOneWriteDelay(Decoded d, Path f) throws Exception {
        List<Long> times = new ArrayList<>();
        for (ContextSwitch s : d.switches()) times.add(s.timestamp());
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
                    } else if (ev.hookId() == ContextSwap.HOOK_ID) {
                        items[0]++;
                    }
                });
                largestBuffer = Math.max(largestBuffer, items[0]);
            }
        }
        times.sort(null);
        long most = 0;
        for (int i = 0, j = 0; i < times.size(); i++) {
            while (times.get(i) - times.get(j) > WRITE_DELAY) j++;
            most = Math.max(most, i - j + 1);
        }
        return most + largestBuffer;
    }

    @Test
    void theGeneratorWritesBatchesWhenTheyAreFlushedAfterEventsOfTheirProcessor() throws Exception {
        Path f = dir.resolve("kernel-order.etl");
        generate(f, GeneratorOptions.defaults().withSwitches(60_000).withSeed(11));
        Map<Integer, Long> lastEvent = new HashMap<>();
        Map<Integer, Long> lastPacket = new HashMap<>();
        Map<Integer, List<Long>> threadEventsSinceBatch = new HashMap<>();
        long[] counts = new long[5]; // thread events before older packets, batches logged after their last packet, batches, late items, ReadyThread events before older packets
        Map<Integer, List<Long>> readiesSinceBatch = new HashMap<>();
        long[] frontier = {Long.MIN_VALUE};
        try (EtlReader r = EtlReader.open(f)) {
            r.next(); // the header buffer
            while (r.next()) {
                int cpu = r.header().processor();
                long writtenBefore = frontier[0];
                long[] bufferMax = {Long.MIN_VALUE};
                r.walk(ev -> {
                    long ts = ev.timestamp();
                    bufferMax[0] = Math.max(bufferMax[0], ts);
                    if (writtenBefore != Long.MIN_VALUE && writtenBefore - ts > WRITE_DELAY) counts[3]++;
                    // everything but packets is written in time order on its processor, the batch itself too
                    assertTrue(ts >= lastEvent.getOrDefault(cpu, Long.MIN_VALUE), "cpu " + cpu + " event at " + ts);
                    lastEvent.put(cpu, ts);
                    if (ThreadEvent.handles(ev.hookId())) threadEventsSinceBatch.computeIfAbsent(cpu, c -> new ArrayList<>()).add(ts);
                    if (ev.hookId() == ReadyThread.HOOK_ID) readiesSinceBatch.computeIfAbsent(cpu, c -> new ArrayList<>()).add(ts);
                    if (ev.hookId() != CompactBatchDecoder.HOOK_ID) return;
                    counts[2]++;
                    List<Long> packets = new ArrayList<>();
                    CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), 0x28,
                            (k, t, o, p, st, w, nw, i) -> packets.add(t));
                    assertTrue(packets.get(0) >= lastPacket.getOrDefault(cpu, Long.MIN_VALUE), "packets of cpu " + cpu + " go back");
                    long last = packets.get(packets.size() - 1);
                    assertTrue(ts >= last, "a batch is logged after its last switch");
                    if (ts > last) counts[1]++;
                    lastPacket.put(cpu, last);
                    if (writtenBefore != Long.MIN_VALUE && writtenBefore - packets.get(0) > WRITE_DELAY) counts[3]++;
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
        assertTrue(counts[1] > counts[2] / 2, "most batches are logged after their last switch: " + counts[1] + " of " + counts[2]);
        assertEquals(0, counts[3], "everything reaches the trace within the logger's write delay");
    }

    @ParameterizedTest(name = "seed {0}, {1} processors")
    @CsvSource({"1, 2", "2, 4", "3, 8", "4, 16"})
    void compactTracesWithThreadEventsDecodeToTheSchedule(long seed, int cpus) throws Exception {
        Path f = dir.resolve("c" + cpus + ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(40_000).withSeed(seed).withShape(cpus, 6, 5);
        List<ScheduleRecorder.Switch> truth = generate(f, o);
        Decoded d = decode(f);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
        assertEquals(0, d.counters().switchesBeforeNewThreadKnown);
        assertTrue(d.counters().threadEvents > 0);
    }

    @Test
    void cswitchTracesDecodeToTheScheduleToo() throws Exception {
        Path f = dir.resolve("cs.etl");
        List<ScheduleRecorder.Switch> truth = generate(f, GeneratorOptions.defaults().withSwitches(20_000).withMode("cswitch"));
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
        long span = d.switches().get(d.switches().size() - 1).timestamp() - d.switches().get(0).timestamp();
        assertTrue(span > 2 * WRITE_DELAY, "the trace spans " + span + " ticks");
        // waiting only for what the logger may still write: no more than one write delay of items
        long bound = mostWithinOneWriteDelay(d, f) + d.counters().threadEvents + d.counters().processEvents;
        assertTrue(d.counters().peakQueued <= bound, d.counters().peakQueued + " queued, bound " + bound);
        assertTrue(d.counters().peakQueued < d.switches().size() / 2, d.counters().toMap().toString());
    }

    @Test
    void aProcessorSilentForMinutesDoesNotHoldBackTheMerge() throws Exception {
        Path f = dir.resolve("quiet.etl");
        long second = 10_000_000L;
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(200_000).withShape(4, 2, 2).withSeed(8)
                .withQuietSpell(new GeneratorOptions.QuietSpell(1, 10 * second, 150 * second));
        List<ScheduleRecorder.Switch> truth = generate(f, o);
        Decoded d = decode(f);
        assertTimeOrdered(d);
        assertMatchesSchedule(d, truth);
        long start = d.switches().get(0).timestamp();
        long[] cpu1 = d.switches().stream().filter(s -> s.cpu() == 1).mapToLong(ContextSwitch::timestamp).toArray();
        long longestGap = 0;
        for (int i = 1; i < cpu1.length; i++) longestGap = Math.max(longestGap, cpu1[i] - cpu1[i - 1]);
        assertTrue(longestGap > 120 * second, "processor 1 was silent for " + longestGap / second + " s");
        assertTrue(d.switches().get(d.switches().size() - 1).timestamp() - start > 170 * second);
        long bound = mostWithinOneWriteDelay(d, f) + d.counters().threadEvents + d.counters().processEvents;
        assertTrue(d.counters().peakQueued <= bound, d.counters().peakQueued + " queued, bound " + bound);
        // the switch that took processor 1 idle left before the idle packet named its new thread
        assertEquals(1, d.counters().switchesBeforeNewThreadKnown);
        ContextSwitch beforeSpell = d.switches().stream().filter(s -> s.cpu() == 1 && s.newThreadId() == null)
                .findFirst().orElseThrow();
        assertNull(beforeSpell.newThreadTimeSinceLastNanos());
        assertNotNull(beforeSpell.oldThreadRunNanos());
    }
}
