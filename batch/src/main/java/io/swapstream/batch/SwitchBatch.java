package io.swapstream.batch;

import io.swapstream.etw.KernelEnums;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Consecutive switches of one session in columns, in time order (docs/reading-the-topics.md, "Decoding a switch batch"):
 * what the decoder fills, the decode stage sends, and the aggregate reads, with no object per switch.
 * Null cells hold {@link #NONE} (int columns) or {@link #NO_TIME} (long columns); a batch is reused,
 * so a consumer copies what it keeps.
 */
public final class SwitchBatch {
    /** An int cell that is null. */
    public static final int NONE = Integer.MIN_VALUE;
    /** A long cell that is null. */
    public static final long NO_TIME = Long.MIN_VALUE;
    public static final int SOURCE_CSWITCH = 0;
    public static final int SOURCE_COMPACT = 1;
    static final String[] SOURCES = {SwitchRow.CSWITCH, SwitchRow.COMPACT};

    private String session;
    private String host;
    private int count;
    /** The session clock ({@code SessionClock}): what makes timeNanos from timestamp; a batch made by hand counts nanoseconds. */
    private long clockBaseTimestamp;
    private long clockBaseNanos;
    private long clockTicksPerSecond = 1_000_000_000L;
    int[] cpu;
    long[] timestamp;
    long[] timeNanos;
    int[] source;
    int[] oldThreadId;
    int[] oldThreadPriority;
    int[] oldThreadState;
    int[] oldThreadWaitReason;
    int[] oldThreadWaitMode;
    int[] newThreadId;
    int[] newThreadPriority;
    long[] newThreadWaitTicks;
    /** Row i's PMC counters are pmc[pmcStart[i] .. pmcStart[i + 1]). */
    int[] pmcStart;
    long[] pmc;
    long[] newThreadTimeSinceLastNanos;
    long[] oldThreadRunNanos;
    long[] newThreadReadyNanos;
    long[] newThreadWaitsNanos;
    int[] readyingThreadId;
    int[] readyingProcessId;
    /** CSwitch only (docs/etw-formats.md §4): previousCState when the old thread is idle, oldThreadRank otherwise. */
    int[] previousCState;
    int[] oldThreadRank;
    int[] newThreadPriorityDecrement;
    int[] oldThreadIdealProcessor;
    int[] oldThreadRemainingQuantum;
    /** Thread records the session produced since the previous batch, up to this one's last switch, in order. */
    private final List<ThreadLabel> threads = new ArrayList<>();

    public SwitchBatch() {
        this(1024);
    }

    public SwitchBatch(int capacity) {
        allocate(Math.max(16, capacity));
    }

    private void allocate(int n) {
        cpu = new int[n];
        timestamp = new long[n];
        timeNanos = new long[n];
        source = new int[n];
        oldThreadId = new int[n];
        oldThreadPriority = new int[n];
        oldThreadState = new int[n];
        oldThreadWaitReason = new int[n];
        oldThreadWaitMode = new int[n];
        newThreadId = new int[n];
        newThreadPriority = new int[n];
        newThreadWaitTicks = new long[n];
        pmcStart = new int[n + 1];
        pmc = new long[16];
        newThreadTimeSinceLastNanos = new long[n];
        oldThreadRunNanos = new long[n];
        newThreadReadyNanos = new long[n];
        newThreadWaitsNanos = new long[n];
        readyingThreadId = new int[n];
        readyingProcessId = new int[n];
        previousCState = new int[n];
        oldThreadRank = new int[n];
        newThreadPriorityDecrement = new int[n];
        oldThreadIdealProcessor = new int[n];
        oldThreadRemainingQuantum = new int[n];
    }

    private void grow() {
        int n = cpu.length * 2;
        cpu = Arrays.copyOf(cpu, n);
        timestamp = Arrays.copyOf(timestamp, n);
        timeNanos = Arrays.copyOf(timeNanos, n);
        source = Arrays.copyOf(source, n);
        oldThreadId = Arrays.copyOf(oldThreadId, n);
        oldThreadPriority = Arrays.copyOf(oldThreadPriority, n);
        oldThreadState = Arrays.copyOf(oldThreadState, n);
        oldThreadWaitReason = Arrays.copyOf(oldThreadWaitReason, n);
        oldThreadWaitMode = Arrays.copyOf(oldThreadWaitMode, n);
        newThreadId = Arrays.copyOf(newThreadId, n);
        newThreadPriority = Arrays.copyOf(newThreadPriority, n);
        newThreadWaitTicks = Arrays.copyOf(newThreadWaitTicks, n);
        pmcStart = Arrays.copyOf(pmcStart, n + 1);
        newThreadTimeSinceLastNanos = Arrays.copyOf(newThreadTimeSinceLastNanos, n);
        oldThreadRunNanos = Arrays.copyOf(oldThreadRunNanos, n);
        newThreadReadyNanos = Arrays.copyOf(newThreadReadyNanos, n);
        newThreadWaitsNanos = Arrays.copyOf(newThreadWaitsNanos, n);
        readyingThreadId = Arrays.copyOf(readyingThreadId, n);
        readyingProcessId = Arrays.copyOf(readyingProcessId, n);
        previousCState = Arrays.copyOf(previousCState, n);
        oldThreadRank = Arrays.copyOf(oldThreadRank, n);
        newThreadPriorityDecrement = Arrays.copyOf(newThreadPriorityDecrement, n);
        oldThreadIdealProcessor = Arrays.copyOf(oldThreadIdealProcessor, n);
        oldThreadRemainingQuantum = Arrays.copyOf(oldThreadRemainingQuantum, n);
    }

    /** Empties the batch for rows of {@code session}. */
    public SwitchBatch reset(String session, String host) {
        this.session = session;
        this.host = host;
        this.count = 0;
        this.pmcStart[0] = 0;
        this.threads.clear();
        return this;
    }

    /** Sets the session clock the rows' times come from (kept through {@link #reset}). */
    public SwitchBatch clock(long baseTimestamp, long baseNanos, long ticksPerSecond) {
        if (ticksPerSecond <= 0) throw new IllegalArgumentException("a clock of " + ticksPerSecond + " ticks a second");
        this.clockBaseTimestamp = baseTimestamp;
        this.clockBaseNanos = baseNanos;
        this.clockTicksPerSecond = ticksPerSecond;
        return this;
    }

    public long clockBaseTimestamp() { return clockBaseTimestamp; }
    public long clockBaseNanos() { return clockBaseNanos; }
    public long clockTicksPerSecond() { return clockTicksPerSecond; }

    /** Makes room for {@code n} rows and sets the count (a decoder then fills the columns). */
    void resize(int n) {
        while (cpu.length < n) grow();
        count = n;
    }

    void pmcCapacity(int n) {
        if (pmc.length < n) pmc = Arrays.copyOf(pmc, n);
    }

    public String session() { return session; }
    public String host() { return host; }
    public int count() { return count; }
    /** No switch and no thread record. */
    public boolean isEmpty() { return count == 0 && threads.isEmpty(); }

    /** The thread records carried with these switches: labels in the same stream, before the rows. */
    public List<ThreadLabel> threads() { return threads; }

    public void addThread(ThreadLabel t) { threads.add(t); }

    /**
     * Appends a row; {@link #NONE} and {@link #NO_TIME} for null cells.
     *
     * @param pmcCounters the row's counters, may be null; copied
     */
    public void add(int cpu, long timestamp, long timeNanos, int source, int oldThreadId, int oldThreadPriority,
                    int oldThreadState, int oldThreadWaitReason, int oldThreadWaitMode, int newThreadId,
                    int newThreadPriority, long newThreadWaitTicks, long[] pmcCounters, long newThreadTimeSinceLastNanos,
                    long oldThreadRunNanos, long newThreadReadyNanos, long newThreadWaitsNanos, int readyingThreadId,
                    int readyingProcessId, int previousCState, int oldThreadRank, int newThreadPriorityDecrement,
                    int oldThreadIdealProcessor, int oldThreadRemainingQuantum) {
        if (count == this.cpu.length) grow();
        int i = count++;
        this.cpu[i] = cpu;
        this.timestamp[i] = timestamp;
        this.timeNanos[i] = timeNanos;
        this.source[i] = source;
        this.oldThreadId[i] = oldThreadId;
        this.oldThreadPriority[i] = oldThreadPriority;
        this.oldThreadState[i] = oldThreadState;
        this.oldThreadWaitReason[i] = oldThreadWaitReason;
        this.oldThreadWaitMode[i] = oldThreadWaitMode;
        this.newThreadId[i] = newThreadId;
        this.newThreadPriority[i] = newThreadPriority;
        this.newThreadWaitTicks[i] = newThreadWaitTicks;
        int p = pmcStart[i];
        int n = pmcCounters == null ? 0 : pmcCounters.length;
        if (p + n > pmc.length) pmc = Arrays.copyOf(pmc, Math.max(pmc.length * 2, p + n));
        if (n > 0) System.arraycopy(pmcCounters, 0, pmc, p, n);
        pmcStart[i + 1] = p + n;
        this.newThreadTimeSinceLastNanos[i] = newThreadTimeSinceLastNanos;
        this.oldThreadRunNanos[i] = oldThreadRunNanos;
        this.newThreadReadyNanos[i] = newThreadReadyNanos;
        this.newThreadWaitsNanos[i] = newThreadWaitsNanos;
        this.readyingThreadId[i] = readyingThreadId;
        this.readyingProcessId[i] = readyingProcessId;
        this.previousCState[i] = previousCState;
        this.oldThreadRank[i] = oldThreadRank;
        this.newThreadPriorityDecrement[i] = newThreadPriorityDecrement;
        this.oldThreadIdealProcessor[i] = oldThreadIdealProcessor;
        this.oldThreadRemainingQuantum[i] = oldThreadRemainingQuantum;
    }

    public int cpu(int i) { return cpu[i]; }
    public long timestamp(int i) { return timestamp[i]; }
    public long timeNanos(int i) { return timeNanos[i]; }
    public int source(int i) { return source[i]; }
    public int oldThreadId(int i) { return oldThreadId[i]; }
    public int oldThreadPriority(int i) { return oldThreadPriority[i]; }
    public int oldThreadState(int i) { return oldThreadState[i]; }
    public int oldThreadWaitReason(int i) { return oldThreadWaitReason[i]; }
    public int oldThreadWaitMode(int i) { return oldThreadWaitMode[i]; }
    public int newThreadId(int i) { return newThreadId[i]; }
    public int newThreadPriority(int i) { return newThreadPriority[i]; }
    public long newThreadWaitTicks(int i) { return newThreadWaitTicks[i]; }
    public long newThreadTimeSinceLastNanos(int i) { return newThreadTimeSinceLastNanos[i]; }
    public long oldThreadRunNanos(int i) { return oldThreadRunNanos[i]; }
    public long newThreadReadyNanos(int i) { return newThreadReadyNanos[i]; }
    public long newThreadWaitsNanos(int i) { return newThreadWaitsNanos[i]; }
    public int readyingThreadId(int i) { return readyingThreadId[i]; }
    public int readyingProcessId(int i) { return readyingProcessId[i]; }
    public int previousCState(int i) { return previousCState[i]; }
    public int oldThreadRank(int i) { return oldThreadRank[i]; }
    public int newThreadPriorityDecrement(int i) { return newThreadPriorityDecrement[i]; }
    public int oldThreadIdealProcessor(int i) { return oldThreadIdealProcessor[i]; }
    public int oldThreadRemainingQuantum(int i) { return oldThreadRemainingQuantum[i]; }
    /** Number of PMC counters of row i. */
    public int pmcCount(int i) { return pmcStart[i + 1] - pmcStart[i]; }
    public long pmc(int i, int k) { return pmc[pmcStart[i] + k]; }

    /** Row i as a record: for printing and tests, not for hot paths. */
    public SwitchRow row(int i) {
        List<Long> counters = null;
        int n = pmcCount(i);
        if (n > 0) {
            counters = new ArrayList<>(n);
            for (int k = 0; k < n; k++) counters.add(pmc(i, k));
        }
        return new SwitchRow(session, host, cpu[i], timestamp[i], timeNanos[i], SOURCES[source[i]], oldThreadId[i],
                boxed(oldThreadPriority[i]),
                oldThreadState[i] == NONE ? null : KernelEnums.threadState(oldThreadState[i]),
                oldThreadWaitReason[i] == NONE ? null : KernelEnums.waitReason(oldThreadWaitReason[i]),
                oldThreadWaitMode[i] == NONE ? null : KernelEnums.WAIT_MODES[oldThreadWaitMode[i]],
                boxed(newThreadId[i]), boxed(newThreadPriority[i]), newThreadWaitTicks[i] == NO_TIME ? null : newThreadWaitTicks[i],
                counters, boxed(newThreadTimeSinceLastNanos[i]), boxed(oldThreadRunNanos[i]),
                boxed(newThreadReadyNanos[i]), boxed(newThreadWaitsNanos[i]), boxed(readyingThreadId[i]),
                boxed(readyingProcessId[i]), boxed(previousCState[i]), boxed(oldThreadRank[i]), boxed(newThreadPriorityDecrement[i]), boxed(oldThreadIdealProcessor[i]), boxed(oldThreadRemainingQuantum[i]));
    }

    /** Appends a record's row (tests and converters). */
    public void add(SwitchRow s) {
        long[] counters = null;
        if (s.pmcCounters() != null) counters = s.pmcCounters().stream().mapToLong(Long::longValue).toArray();
        add(s.cpu(), s.timestamp(), s.timeNanos(), s.source().equals(SwitchRow.COMPACT) ? SOURCE_COMPACT : SOURCE_CSWITCH,
                s.oldThreadId(), unboxed(s.oldThreadPriority()),
                s.oldThreadState() == null ? NONE : KernelEnums.threadStateValue(s.oldThreadState()),
                s.oldThreadWaitReason() == null ? NONE : KernelEnums.waitReasonValue(s.oldThreadWaitReason()),
                s.oldThreadWaitMode() == null ? NONE : "UserMode".equals(s.oldThreadWaitMode()) ? 1 : 0,
                unboxed(s.newThreadId()), unboxed(s.newThreadPriority()),
                s.newThreadWaitTicks() == null ? NO_TIME : s.newThreadWaitTicks(), counters,
                s.newThreadTimeSinceLastNanos() == null ? NO_TIME : s.newThreadTimeSinceLastNanos(),
                s.oldThreadRunNanos() == null ? NO_TIME : s.oldThreadRunNanos(),
                s.newThreadReadyNanos() == null ? NO_TIME : s.newThreadReadyNanos(),
                s.newThreadWaitsNanos() == null ? NO_TIME : s.newThreadWaitsNanos(),
                unboxed(s.readyingThreadId()), unboxed(s.readyingProcessId()), unboxed(s.previousCState()), unboxed(s.oldThreadRank()), unboxed(s.newThreadPriorityDecrement()), unboxed(s.oldThreadIdealProcessor()), unboxed(s.oldThreadRemainingQuantum()));
    }

    /** Every row as a record. */
    public List<SwitchRow> rows() {
        List<SwitchRow> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) out.add(row(i));
        return out;
    }

    private static Integer boxed(int v) { return v == NONE ? null : v; }
    private static Long boxed(long v) { return v == NO_TIME ? null : v; }
    private static int unboxed(Integer v) { return v == null ? NONE : v; }
}
