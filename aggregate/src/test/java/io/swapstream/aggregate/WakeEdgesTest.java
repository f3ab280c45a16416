package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.ScheduleRecorder;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.WakeEdge;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Wake edges of generated traces against the simulated scheduler's own decisions (ScheduleRecorder), not decoded rows. */
class WakeEdgesTest {
    @TempDir Path dir;

    static final long WINDOW = 10_000_000_000L;

    @Test
    void cswitchTraceEdgesAreWhoWokeWhomAsTheSchedulerDecided() throws Exception {
        assertEdgesMatchTheSchedule(GeneratorOptions.defaults().withSwitches(60_000).withShape(4, 6, 5).withSeed(31).withMode("cswitch"));
    }

    @Test
    void compactTraceEdgesAreWhoWokeWhomAsTheSchedulerDecided() throws Exception {
        assertEdgesMatchTheSchedule(GeneratorOptions.defaults().withSwitches(60_000).withShape(8, 6, 5).withSeed(32));
    }

    void assertEdgesMatchTheSchedule(GeneratorOptions o) throws Exception {
        Path f = dir.resolve(o.mode() + ".etl");
        ScheduleRecorder decided = new ScheduleRecorder();
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()), decided);
        SessionStatistics windowed = new SessionStatistics(WINDOW);
        SessionDecoder.decodeBatches(f, "h", null, windowed::accept, null);
        List<WakeEdge> got = windowed.wakeEdges();

        long startNanos = (o.startTimeFileTime() - 116444736000000000L) * 100;
        boolean compact = !o.mode().equals("cswitch");
        List<ScheduleRecorder.Switch> truth = decided.inTimeOrder();
        // a compact trace names a processor's last switch's new thread never: that switch-in is in no row
        Map<Integer, ScheduleRecorder.Switch> lastOnCpu = new HashMap<>();
        for (ScheduleRecorder.Switch s : truth) lastOnCpu.put(s.cpu(), s);
        Map<String, long[]> expected = new TreeMap<>();
        for (ScheduleRecorder.Switch s : truth) {
            if (!s.endsWait() || (compact && lastOnCpu.get(s.cpu()) == s)) continue;
            long t = startNanos + (s.ts() - TraceGenerator.TS0) * 100;
            String waker = s.newThreadReady() == null ? WakeEdges.UNKNOWN_NAME
                    : s.readier() == null ? WakeEdges.INTERRUPT_NAME : image(s.readierPid());
            long wait = (s.newThreadReady() == null ? s.newThreadTimeSinceLast() : s.newThreadWaits()) * 100;
            String key = Math.floorDiv(t, WINDOW) * WINDOW + " " + waker + " " + image(s.newPid());
            long[] e = expected.computeIfAbsent(key, k -> new long[] {0, 0, Long.MIN_VALUE, 0, 0});
            e[0]++;
            e[1] += wait;
            e[2] = Math.max(e[2], wait);
            if (s.newThreadReady() != null) {
                e[3]++;
                e[4] += s.newThreadReady() * 100;
            }
        }
        Map<String, long[]> actual = new TreeMap<>();
        for (WakeEdge e : got) {
            assertEquals(e.getWindowStartNanos() + WINDOW, e.getWindowEndNanos());
            long[] was = actual.put(e.getWindowStartNanos() + " " + e.getWakerProcess() + " " + e.getWokenProcess(),
                    new long[] {e.getWakeCount(), e.getWaitSumNanos(), e.getWaitMaxNanos(), e.getReadyCount(), e.getReadySumNanos()});
            assertEquals(null, was, "one record an edge and window");
            assertTrue(e.getWaitP99Nanos() <= e.getWaitMaxNanos());
        }
        assertEquals(toStrings(expected), toStrings(actual));
        // every kind of waker is there: threads of each process, and DPCs
        assertTrue(actual.keySet().stream().anyMatch(k -> k.contains(" " + WakeEdges.INTERRUPT_NAME + " ")));
        assertTrue(actual.keySet().stream().filter(k -> k.contains(" app")).count() > 20, actual.keySet().toString());
    }

    /**
     * A session opened from the stores (its open window's edges and carried state restored, no batch since) that
     * ends at once: its edges go out named by the session and host the stage gives it, and serialize.
     */
    @Test
    void restoredEdgesOfASessionEndingAtOnceNameItsSessionAndHost() throws Exception {
        Path f = dir.resolve("restored.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(5_000).withMode("cswitch");
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        SessionStatistics before = new SessionStatistics(WINDOW);
        var d = SessionDecoder.decodeBatches(f, "h", null, before::accept, null);
        io.swapstream.schemas.state.StateWriter state = new io.swapstream.schemas.state.StateWriter(64);
        before.writeState(state);
        io.swapstream.schemas.state.StateWriter edges = new io.swapstream.schemas.state.StateWriter(64);
        before.openEdges().write(edges);
        SessionStatistics after = new SessionStatistics(WINDOW);
        byte[] s = state.toByteArray();
        byte[] e = edges.toByteArray();
        after.readState(new io.swapstream.schemas.state.StateReader(s, 0, s.length));
        after.restoreEdges(WakeEdges.read(new io.swapstream.schemas.state.StateReader(e, 0, e.length)));
        after.identify(d.session().session(), "h");
        after.closeAll();
        List<WakeEdge> out = after.wakeEdges();
        assertTrue(!out.isEmpty());
        for (WakeEdge w : out) {
            assertEquals(d.session().session(), w.getSession().toString());
            assertEquals("h", w.getHost().toString());
            assertTrue(w.toByteBuffer().remaining() > 0);
        }
    }

    static String image(int pid) {
        return pid == 0 ? WakeEdges.UNKNOWN_NAME : "app" + (pid - 400) / 4 + ".exe";
    }

    static List<String> toStrings(Map<String, long[]> m) {
        List<String> out = new ArrayList<>();
        m.forEach((k, v) -> out.add(k + " " + java.util.Arrays.toString(v)));
        return out;
    }
}
