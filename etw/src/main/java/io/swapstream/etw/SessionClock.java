package io.swapstream.etw;

import java.math.BigInteger;

/**
 * Converts raw session timestamps to Unix epoch nanoseconds, exactly, for clock types 1-3
 * (docs/etw-formats.md §3). Scaling is split into whole seconds and a remainder so long traces do not
 * overflow.
 */
public final class SessionClock {
    /** FILETIME of 1970-01-01T00:00:00Z. */
    public static final long FILETIME_UNIX_EPOCH = 116444736000000000L;

    private final int clockType;
    private final long ts0;
    private final long baseNanos;
    private final long ticksPerSecond;

    private SessionClock(int clockType, long ts0, long baseNanos, long ticksPerSecond) {
        this.clockType = clockType;
        this.ts0 = ts0;
        this.baseNanos = baseNanos;
        this.ticksPerSecond = ticksPerSecond;
    }

    /**
     * The clock of a session.
     *
     * @throws IllegalArgumentException for a clock type or frequency this cannot convert; the
     *         message says why (callers locate it in the file)
     */
    public static SessionClock of(LogfileHeader h) {
        long base = fileTimeToUnixNanos(h.startTime());
        return switch (h.clockType()) {
            case ClockType.PERFCOUNTER -> {
                if (h.perfFreq() <= 0) throw new IllegalArgumentException("QPC clock with PerfFreq " + h.perfFreq());
                yield new SessionClock(ClockType.PERFCOUNTER, h.timestamp(), base, h.perfFreq());
            }
            // FILETIME: 100 ns ticks from 1601, so 1970 is the base
            case ClockType.SYSTEMTIME -> new SessionClock(ClockType.SYSTEMTIME, FILETIME_UNIX_EPOCH, 0, 10_000_000L);
            case ClockType.CPUCYCLE -> {
                if (h.cpuSpeedInMHz() <= 0) throw new IllegalArgumentException("CPU-cycle clock with CpuSpeedInMHz " + h.cpuSpeedInMHz());
                yield new SessionClock(ClockType.CPUCYCLE, h.timestamp(), base, h.cpuSpeedInMHz() * 1_000_000L);
            }
            default -> throw new IllegalArgumentException("unsupported clock type " + h.clockType()
                    + " (" + ClockType.name(h.clockType()) + ")");
        };
    }

    public static long fileTimeToUnixNanos(long fileTime) {
        return (fileTime - FILETIME_UNIX_EPOCH) * 100L;
    }

    public int clockType() { return clockType; }
    public long ticksPerSecond() { return ticksPerSecond; }
    /** The raw timestamp at {@link #baseNanos()}. */
    public long baseTimestamp() { return ts0; }
    /** Unix epoch nanoseconds at {@link #baseTimestamp()}. */
    public long baseNanos() { return baseNanos; }

    /** Unix epoch nanoseconds of raw timestamp {@code ts}: {@code baseNanos + floor((ts - baseTimestamp) * 1e9 / ticksPerSecond)}. */
    public long toUnixNanos(long ts) {
        return toUnixNanos(ts, ts0, baseNanos, ticksPerSecond);
    }

    /** The conversion of any clock given by its base and frequency (records carry these three numbers). */
    public static long toUnixNanos(long ts, long baseTimestamp, long baseNanos, long ticksPerSecond) {
        return baseNanos + ticksToNanos(ts - baseTimestamp, ticksPerSecond);
    }

    /** A duration in session ticks as nanoseconds (floor). */
    public long ticksToNanos(long ticks) {
        return ticksToNanos(ticks, ticksPerSecond);
    }

    /** {@code floor(ticks * 1e9 / f)} without overflow, for {@code f > 0}. */
    public static long ticksToNanos(long ticks, long f) {
        long q = Math.floorDiv(ticks, f);
        long r = Math.floorMod(ticks, f);
        if (r <= Long.MAX_VALUE / 1_000_000_000L) {
            return q * 1_000_000_000L + r * 1_000_000_000L / f;
        }
        return q * 1_000_000_000L + BigInteger.valueOf(r).multiply(BigInteger.valueOf(1_000_000_000L))
                .divide(BigInteger.valueOf(f)).longValueExact();
    }
}
