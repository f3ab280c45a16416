package io.swapstream.etw;

/**
 * When the kernel logger writes what it logged (docs/etw-formats.md §1 and §5): the rules the trace
 * generator obeys. The decoder's merge assumes none of the timing here; it reads how late buffers
 * came from the trace itself ({@link BufferLateness}).
 *
 * <ul>
 *   <li>Events other than compact batches are written into their processor's buffer as they
 *       happen, so one processor's events are in time order (verified on every real file).</li>
 *   <li>A compact batch is written when it is flushed, with the flush time as its timestamp; its
 *       packets are in time order and later than the previous batch's on that processor.</li>
 *   <li>A batch is flushed once it is older than {@value #MAX_BATCH_AGE_TIMER_TICKS} timer ticks
 *       (§5: "more than 500 clock ticks since its start"). Adopted reading: the age is checked at
 *       the processor's next switch, and at the logger's flush timer when the session has one.</li>
 *   <li>A session logging to a file has no flush timer by default (FlushTimer 0): it writes a
 *       processor's buffer when it is full, and every buffer when it stops, so a quiet processor's
 *       buffer comes seconds or minutes late (a real kernel file here has one 12.4 s late). A
 *       real-time session, or one given a flush timer, writes every processor's partly filled buffer
 *       each period ({@link #FLUSH_TIMER_NANOS} by default).</li>
 * </ul>
 */
public final class LoggerTiming {
    private LoggerTiming() {}

    public static final int MAX_BATCH_AGE_TIMER_TICKS = 500;
    /** The flush timer of a real-time session (EVENT_TRACE_PROPERTIES.FlushTimer, 1 s); a file session has none. */
    public static final long FLUSH_TIMER_NANOS = 1_000_000_000L;
    /** TimerResolution (100 ns units) when the header has none: the 15.625 ms default timer. */
    public static final int DEFAULT_TIMER_RESOLUTION = 156_250;

    /** The batch age limit in nanoseconds, from the header's TimerResolution (100 ns units). */
    public static long maxBatchAgeNanos(int timerResolution) {
        long res = timerResolution > 0 ? timerResolution : DEFAULT_TIMER_RESOLUTION;
        return MAX_BATCH_AGE_TIMER_TICKS * res * 100L;
    }

    /**
     * With a {@link #FLUSH_TIMER_NANOS} flush timer only: the longest time, in session clock ticks,
     * between an event's timestamp and the trace holding it: the batch age limit, plus one timer
     * period until the age is checked, plus one until the buffer is written. A file session has no
     * such bound.
     */
    public static long flushedWriteDelayTicks(int timerResolution, long ticksPerSecond) {
        long millis = (maxBatchAgeNanos(timerResolution) + 2 * FLUSH_TIMER_NANOS) / 1_000_000L;
        return Math.multiplyExact(millis, ticksPerSecond) / 1_000L;
    }
}
