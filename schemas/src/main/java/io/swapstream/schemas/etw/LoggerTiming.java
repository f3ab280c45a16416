package io.swapstream.schemas.etw;

/**
 * When the kernel logger writes what it logged: the rules the time-ordered merge of a session's
 * processors relies on, and that the trace generator obeys (ETW-FORMATS.md §1 and §5).
 *
 * <ul>
 *   <li>Events other than compact batches are written into their processor's buffer as they
 *       happen, so one processor's events are in time order (verified on every real file).</li>
 *   <li>A compact batch is written when it is flushed, with the flush time as its timestamp; its
 *       packets are in time order and later than the previous batch's on that processor.</li>
 *   <li>A batch is flushed once it is older than {@value #MAX_BATCH_AGE_TIMER_TICKS} timer ticks
 *       (§5: "more than 500 clock ticks since its start"). Adopted reading: the age is checked at
 *       the processor's next switch and at the logger's flush timer, whichever comes first, so a
 *       processor that stops switching does not keep its batch.</li>
 *   <li>The flush timer ({@link #FLUSH_TIMER_NANOS}) writes every processor's partly filled
 *       buffer to the trace.</li>
 * </ul>
 * Together: an event reaches the trace at most {@link #maxWriteDelayTicks} after its own time.
 */
public final class LoggerTiming {
    private LoggerTiming() {}

    public static final int MAX_BATCH_AGE_TIMER_TICKS = 500;
    /** The flush timer of a real-time or flushed file session (EVENT_TRACE_PROPERTIES.FlushTimer, 1 s). */
    public static final long FLUSH_TIMER_NANOS = 1_000_000_000L;
    /** TimerResolution (100 ns units) when the header has none: the 15.625 ms default timer. */
    public static final int DEFAULT_TIMER_RESOLUTION = 156_250;

    /** The batch age limit in nanoseconds, from the header's TimerResolution (100 ns units). */
    public static long maxBatchAgeNanos(int timerResolution) {
        long res = timerResolution > 0 ? timerResolution : DEFAULT_TIMER_RESOLUTION;
        return MAX_BATCH_AGE_TIMER_TICKS * res * 100L;
    }

    /**
     * The longest time, in session clock ticks, between an event's timestamp and the trace holding
     * it: the batch age limit, plus one flush-timer period until the age is checked, plus one until
     * the buffer is written.
     */
    public static long maxWriteDelayTicks(int timerResolution, long ticksPerSecond) {
        long millis = (maxBatchAgeNanos(timerResolution) + 2 * FLUSH_TIMER_NANOS) / 1_000_000L;
        return Math.multiplyExact(millis, ticksPerSecond) / 1_000L;
    }

    /**
     * The same for a session without compact batches, where every event is written as it happens:
     * two flush-timer periods (one until the buffer is flushed, one of slack).
     */
    public static long maxEventWriteDelayTicks(long ticksPerSecond) {
        return Math.multiplyExact(2 * FLUSH_TIMER_NANOS / 1_000_000L, ticksPerSecond) / 1_000L;
    }
}
