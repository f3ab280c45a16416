package io.swapstream.decode.merge;

import java.time.Duration;

/**
 * What a session's time-ordered merge may wait for. A finished file has shown how late its buffers
 * come ({@link io.swapstream.etw.BufferLateness}), so its merge waits for exactly that and
 * stops at nothing else but memory. A live session has not shown its future: its merge waits until
 * every processor's own buffers, or the lateness the session has shown so far, make an item safe, and
 * only {@code maxLatenessNanos} or the memory cap force items out sooner; a switch that then comes
 * after later ones is counted as out of order.
 *
 * @param fileLatenessTicks the finished file's largest buffer lateness in session clock ticks, or
 *                          {@link #UNKNOWN} for a live session
 * @param maxLatenessNanos  a live session's limit: items this much older than the latest event leave
 * @param maxQueueBytes     the memory the merge's queue may take before its oldest items leave
 * @param flushTimerNanos   a live session's declared flush timer: every processor's events reach the trace within
 *                          it, so the merge waits at most twice that for a quiet processor's CSwitch events (a compact
 *                          batch stays open on a quiet processor, so its packets are not bounded); {@link #UNKNOWN} for none
 */
public record MergeLimits(long fileLatenessTicks, long maxLatenessNanos, long maxQueueBytes, long flushTimerNanos) {
    public static final long UNKNOWN = -1;
    public static final Duration DEFAULT_MAX_LATENESS = Duration.ofMillis(io.swapstream.schemas.SwapstreamConfig.DEFAULT_DECODE_MAX_LATENESS_MS);
    /** What one queued item takes in the merge's columns, PMC counters and thread events aside. */
    static final int BYTES_PER_ITEM = 80;

    public MergeLimits(long fileLatenessTicks, long maxLatenessNanos, long maxQueueBytes) {
        this(fileLatenessTicks, maxLatenessNanos, maxQueueBytes, UNKNOWN);
    }

    public MergeLimits {
        if (maxLatenessNanos <= 0) throw new IllegalArgumentException("the maximum lateness must be positive, not " + maxLatenessNanos + " ns");
        if (maxQueueBytes < BYTES_PER_ITEM) throw new IllegalArgumentException("the merge's memory cap must be at least " + BYTES_PER_ITEM + " bytes");
    }

    /** A quarter of the JVM's maximum heap. */
    public static long defaultMaxQueueBytes() {
        return Runtime.getRuntime().maxMemory() / 4;
    }

    /** A live session with the default limits. */
    public static MergeLimits live() {
        return live(DEFAULT_MAX_LATENESS.toNanos(), defaultMaxQueueBytes());
    }

    public static MergeLimits live(long maxLatenessNanos, long maxQueueBytes) {
        return new MergeLimits(UNKNOWN, maxLatenessNanos, maxQueueBytes);
    }

    /** A finished file whose buffers are at most {@code latenessTicks} late: exact, within the default memory cap. */
    public static MergeLimits finished(long latenessTicks) {
        return new MergeLimits(Math.max(0, latenessTicks), Long.MAX_VALUE, defaultMaxQueueBytes());
    }

    /** This session's limits, known now to be a finished file's with {@code latenessTicks}; {@link #UNKNOWN} keeps them live. */
    public MergeLimits withFileLateness(long latenessTicks) {
        return latenessTicks < 0 ? this : new MergeLimits(latenessTicks, Long.MAX_VALUE, maxQueueBytes);
    }

    /** This live session's limits with its logger's declared flush timer, {@code millis} ({@link #UNKNOWN}: none). */
    public MergeLimits withFlushTimer(long millis) {
        return millis <= 0 || finishedFile() ? this : new MergeLimits(fileLatenessTicks, maxLatenessNanos, maxQueueBytes, millis * 1_000_000L);
    }

    /** Twice the declared flush timer in ticks of a clock of {@code ticksPerSecond}; {@link Long#MAX_VALUE} when none is declared. */
    long flushBoundTicks(long ticksPerSecond) {
        if (flushTimerNanos <= 0) return Long.MAX_VALUE;
        long millis = Math.max(1, 2 * flushTimerNanos / 1_000_000L);
        try {
            return Math.multiplyExact(millis, ticksPerSecond) / 1_000L;
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    public boolean finishedFile() { return fileLatenessTicks >= 0; }

    /** Items the queue may hold. */
    int maxQueued() {
        return (int) Math.min(Integer.MAX_VALUE - 8, maxQueueBytes / BYTES_PER_ITEM);
    }

    /** The lateness limit in ticks of a clock of {@code ticksPerSecond}; {@link Long#MAX_VALUE} when there is none. */
    long maxLatenessTicks(long ticksPerSecond) {
        if (maxLatenessNanos == Long.MAX_VALUE) return Long.MAX_VALUE;
        long millis = Math.max(1, maxLatenessNanos / 1_000_000L);
        try {
            return Math.multiplyExact(millis, ticksPerSecond) / 1_000L;
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
