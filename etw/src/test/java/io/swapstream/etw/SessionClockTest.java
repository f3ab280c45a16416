package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SessionClockTest {
    // 2020-01-01T00:00:00Z as FILETIME and as Unix nanoseconds
    static final long START_FT = 132223104000000000L;
    static final long START_NS = 1577836800_000_000_000L;

    static LogfileHeader header(int clock, long perfFreq, int mhz, long ts0) {
        return new LogfileHeader(65536, 10, 0, 0, 0, 19041, 4, 0, 156250, 0, 1, 1, 0, 8, 0, mhz, 0, perfFreq,
                START_FT, clock, 0, "x", "y", ts0);
    }

    @Test
    void qpcIsExactAndDoesNotOverflowOnLongTraces() {
        SessionClock c = SessionClock.of(header(1, 10_000_000L, 3000, 5_000_000L));
        assertEquals(START_NS, c.toUnixNanos(5_000_000L));
        assertEquals(START_NS + 100, c.toUnixNanos(5_000_001L));
        // 30 days at 10 MHz: ticks * 1e9 would overflow a long
        long ticks = 30L * 86_400 * 10_000_000L;
        assertEquals(START_NS + 30L * 86_400 * 1_000_000_000L, c.toUnixNanos(5_000_000L + ticks));
    }

    @Test
    void qpcFinerThan100nsKeepsTheSubTickPart() {
        SessionClock c = SessionClock.of(header(1, 3_000_000_000L, 3000, 0));
        assertEquals(START_NS + 1, c.toUnixNanos(3)); // 3 ticks at 3 GHz = 1 ns
        assertEquals(START_NS + 3_600_000_000_000L + 1, c.toUnixNanos(3_600L * 3_000_000_000L + 3));
    }

    @Test
    void systemTimeIsAFileTime() {
        SessionClock c = SessionClock.of(header(2, 0, 0, 0));
        assertEquals(START_NS + 1_000_000_000L, c.toUnixNanos(START_FT + 10_000_000L));
    }

    @Test
    void cpuCyclesUseCpuSpeed() {
        SessionClock c = SessionClock.of(header(3, 0, 2000, 1000));
        assertEquals(START_NS + 1_000_000L, c.toUnixNanos(1000 + 2_000_000L)); // 2e6 cycles at 2 GHz = 1 ms
        assertEquals(START_NS - 1, c.toUnixNanos(998)); // before ts0 rounds toward minus infinity
    }

    @Test
    void rawClockIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SessionClock.of(header(0, 1, 1, 0)));
        assertEquals("unsupported clock type 0 (EVENT_TRACE_CLOCK_RAW)", e.getMessage());
    }
}
