package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.export.FlightRecorder;
import io.swapstream.export.HostCondition;
import io.swapstream.schemas.avro.HostStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code archive --when} and {@code --hosts}: the conditions' syntax, and which minutes a roll-up row keeps. */
class HostConditionTest {
    static final long MINUTE = 60_000_000_000L;

    @TempDir Path dir;

    static HostStats row(String host, long windowStart, Long readyP99Nanos, long switchIns) {
        return HostStats.newBuilder().setHost(host).setWindowStartNanos(windowStart).setWindowEndNanos(windowStart + MINUTE)
                .setSessions(1).setProcesses(1).setThreads(1).setSwitchInCount(switchIns).setRunSumNanos(0).setReadyCount(0)
                .setReadySumNanos(0).setReadyP99Nanos(readyP99Nanos).setTopProcesses(Map.of()).setFinal$(true).setRevision(0)
                .setReadyIdleWakeCount(0).setReadyIdleWakeSumNanos(0).setReadyContendedCount(0).setReadyContendedSumNanos(0)
                .setReadyIdleWakeByCState(Map.of()).setReadyIdleWakeSumNanosByCState(Map.of()).build();
    }

    @Test
    void aTimeFieldTakesADurationAndACountANumber() {
        HostCondition c = HostCondition.parse("readyP99 > 10ms");
        assertEquals("readyP99Nanos", c.field());
        assertEquals(10_000_000L, c.threshold());
        assertEquals(1_500_000_000L, HostCondition.parse("readyMaxNanos>=1.5s").threshold());
        assertEquals(250_000L, HostCondition.parse(" readyp99 < 250us ").threshold());
        assertEquals(800L, HostCondition.parse("waitP99 <= 800ns").threshold());
        HostCondition n = HostCondition.parse("switchInCount >= 1000000");
        assertEquals("switchInCount", n.field());
        assertEquals(1_000_000L, n.threshold());
    }

    @Test
    void eachOperatorComparesAsWritten() {
        HostStats at = row("h", 0, 10_000_000L, 5);
        assertFalse(HostCondition.parse("readyP99 > 10ms").holds(at));
        assertTrue(HostCondition.parse("readyP99 >= 10ms").holds(at));
        assertTrue(HostCondition.parse("readyP99 <= 10ms").holds(at));
        assertFalse(HostCondition.parse("readyP99 < 10ms").holds(at));
        assertTrue(HostCondition.parse("readyP99 > 9999999ns").holds(at));
        assertTrue(HostCondition.parse("switchInCount > 4").holds(at));
        // a window without ready times has no p99: no condition on it holds, < neither
        assertFalse(HostCondition.parse("readyP99 < 10ms").holds(row("h", 0, null, 5)));
    }

    @Test
    void badConditionsAreRefusedSayingWhy() {
        Map<String, String> bad = Map.of(
                "readyP99 10ms", "is not FIELD OP VALUE",
                "readyP99 > 10", "give the unit",
                "readyP99 > 10 parsecs", "is not one of ns, us, ms, s, m",
                "readyP99 > 10h", "is not one of ns, us, ms, s, m",
                "switchInCount > 5ms", "is a count",
                "switchInCount > 1.5", "a whole number",
                "latency > 10ms", "is not a numeric field of the host roll-up",
                "host > 3", "is not a numeric field of the host roll-up");
        bad.forEach((text, why) -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HostCondition.parse(text), text);
            assertTrue(e.getMessage().startsWith("--when: ") && e.getMessage().contains(why), e.getMessage());
        });
    }

    @Test
    void hostsAloneKeepEveryMinuteOfThoseHosts() {
        FlightRecorder r = new FlightRecorder(Set.of("web01", "db07"), List.of());
        assertEquals(List.of(new FlightRecorder.Minute("db07", 5 * MINUTE, 6 * MINUTE)), r.minutes(row("db07", 5 * MINUTE, null, 0)));
        assertEquals(List.of(), r.minutes(row("app3", 5 * MINUTE, 99_000_000L, 0)));
    }

    @Test
    void aConditionKeepsItsMinuteAndTheOneBeforeOnAnyHostOrOnTheChosenOnes() {
        List<HostCondition> when = List.of(HostCondition.parse("readyP99 > 10ms"), HostCondition.parse("switchInCount > 1000"));
        FlightRecorder any = new FlightRecorder(Set.of(), when);
        assertEquals(List.of(new FlightRecorder.Minute("app3", 4 * MINUTE, 5 * MINUTE), new FlightRecorder.Minute("app3", 5 * MINUTE, 6 * MINUTE)),
                any.minutes(row("app3", 5 * MINUTE, 11_000_000L, 0)));
        assertEquals(when.get(1), any.met(row("app3", 0, 1_000_000L, 2000)), "one condition of several is enough");
        assertEquals(List.of(), any.minutes(row("app3", 5 * MINUTE, 9_000_000L, 10)));
        assertNull(any.met(row("app3", 5 * MINUTE, null, 10)));
        FlightRecorder chosen = new FlightRecorder(Set.of("db07"), when);
        assertEquals(List.of(), chosen.minutes(row("app3", 5 * MINUTE, 11_000_000L, 0)));
        assertEquals(2, chosen.minutes(row("db07", 5 * MINUTE, 11_000_000L, 0)).size());
    }

    @Test
    void theCommandRefusesABadConditionOrHostInOneLine() {
        for (String[] bad : List.of(new String[] {"--when", "readyP99 > 10"}, new String[] {"--when", "nonsense"},
                new String[] {"--hosts", "web01,bad:host"}, new String[] {"--hosts", "web01,,db07"})) {
            List<String> args = new ArrayList<>(List.of("archive", "--to", dir.toString(), "-b", "127.0.0.1:9"));
            args.addAll(List.of(bad));
            CliRunner r = CliRunner.run(args.toArray(String[]::new));
            assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), String.join(" ", bad) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }
}
