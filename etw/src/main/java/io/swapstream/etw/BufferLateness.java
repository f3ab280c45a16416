package io.swapstream.etw;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * How late a session's buffers reach its trace (docs/etw-formats.md §1). A buffer's lateness is the latest
 * event time in the buffers written before it minus the earliest event time in it, when positive.
 * Nothing in a file bounds it: a session logging to a file writes a processor's buffer only when it
 * is full or when the session stops (FlushTimer 0, the file-mode default), so a quiet processor's
 * buffer comes seconds or minutes after later events of the others. A finished file shows its own
 * lateness, which is all a time-ordered merge of it needs to wait for.
 *
 * <p>An event's time is its timestamp; a compact batch (HookId 0x0525) also holds switches as old as
 * its FirstTimeStamp, which it reports as its earliest time. Fed buffer by buffer
 * ({@link #onEvent}, then {@link #endBuffer}), the same accounting serves a walk of a whole file
 * ({@link #of}) and a decoder that learns a live session's lateness as its buffers come.
 */
public final class BufferLateness {
    /** The compact context-switch batch (docs/etw-formats.md §5); its payload starts with FirstTimeStamp. */
    public static final int COMPACT_BATCH_HOOK_ID = 0x0525;

    /** The latest event time of the buffers taken so far; {@link Long#MIN_VALUE} before any. */
    private long latest = Long.MIN_VALUE;
    private long earliestInBuffer = Long.MAX_VALUE;
    private long latestInBuffer = Long.MIN_VALUE;
    private long kernelEarliestInBuffer = Long.MAX_VALUE;
    private long kernelLatest = Long.MIN_VALUE;
    private long kernelLatestInBuffer = Long.MIN_VALUE;
    private long max;
    private long maxBuffer = -1;
    private long buffers;
    /** Whether it also keeps each processor's largest lateness (for inspect; a decoder needs only the largest). */
    private final boolean byProcessor;
    /** Per processor, the largest lateness of its buffers counting kernel trace headers only, and which buffer. */
    private long[] kernelMaxByCpu = new long[0];
    private long[] kernelMaxBufferByCpu = new long[0];

    /** The largest lateness alone. */
    public BufferLateness() {
        this(false);
    }

    private BufferLateness(boolean byProcessor) {
        this.byProcessor = byProcessor;
    }

    /** Continues a session's accounting from what it had shown: its latest event time and largest lateness. */
    public static BufferLateness resume(long latest, long max) {
        BufferLateness l = new BufferLateness();
        l.latest = l.kernelLatest = latest;
        l.max = Math.max(0, max);
        return l;
    }

    /** Takes one event of the current buffer. */
    public void onEvent(TraceEvent ev) {
        long ts = ev.timestamp();
        if (ts == Long.MIN_VALUE) return;
        long earliest = ts;
        if (ev.hookId() == COMPACT_BATCH_HOOK_ID && ev.payloadLength() >= 8) {
            // the batch's switches are older than the batch: as old as its first one
            earliest = Math.min(ts, ev.data().getLong(ev.payloadOffset())  /* buffers are read little-endian */);
        }
        if (earliest < earliestInBuffer) earliestInBuffer = earliest;
        if (ts > latestInBuffer) latestInBuffer = ts;
        if (byProcessor && ev.headerType().kernel) {
            if (earliest < kernelEarliestInBuffer) kernelEarliestInBuffer = earliest;
            if (ts > kernelLatestInBuffer) kernelLatestInBuffer = ts;
        }
    }

    /**
     * Ends the current buffer, written by processor {@code cpu}: returns its lateness (0 when it is
     * not late), in the session's clock ticks.
     */
    public long endBuffer(int cpu) {
        long index = buffers++;
        long late = lateness(latest, earliestInBuffer);
        if (late > max) {
            max = late;
            maxBuffer = index;
        }
        long kernelLate = byProcessor ? lateness(kernelLatest, kernelEarliestInBuffer) : 0;
        if (kernelLate > 0) {
            if (cpu >= kernelMaxByCpu.length) {
                int n = Math.max(cpu + 1, kernelMaxByCpu.length * 2);
                kernelMaxByCpu = Arrays.copyOf(kernelMaxByCpu, n);
                kernelMaxBufferByCpu = Arrays.copyOf(kernelMaxBufferByCpu, n);
            }
            if (kernelLate > kernelMaxByCpu[cpu]) {
                kernelMaxByCpu[cpu] = kernelLate;
                kernelMaxBufferByCpu[cpu] = index;
            }
        }
        latest = Math.max(latest, latestInBuffer);
        kernelLatest = Math.max(kernelLatest, kernelLatestInBuffer);
        earliestInBuffer = kernelEarliestInBuffer = Long.MAX_VALUE;
        latestInBuffer = kernelLatestInBuffer = Long.MIN_VALUE;
        return late;
    }

    private static long lateness(long before, long earliest) {
        if (before == Long.MIN_VALUE || earliest == Long.MAX_VALUE || earliest >= before) return 0;
        return before - earliest;
    }

    /** The largest lateness of any buffer so far, in clock ticks. */
    public long max() { return max; }

    /** The buffer (its index in the session, the header buffer 0) with the largest lateness; -1 when none was late. */
    public long maxBuffer() { return maxBuffer; }

    /** The latest event time in the buffers taken so far. */
    public long latest() { return latest; }

    public long buffers() { return buffers; }

    /**
     * Per processor that wrote a late buffer: its largest lateness counting kernel trace headers only,
     * and the buffer (empty unless walked {@link #byProcessor(EtlReader)}).
     */
    public Map<Integer, long[]> kernelLatenessByProcessor() {
        Map<Integer, long[]> m = new TreeMap<>();
        for (int c = 0; c < kernelMaxByCpu.length; c++) {
            if (kernelMaxByCpu[c] > 0) m.put(c, new long[] {kernelMaxByCpu[c], kernelMaxBufferByCpu[c]});
        }
        return m;
    }

    /** Walks every buffer {@code reader} has left, for the largest lateness. */
    public static BufferLateness of(EtlReader reader) throws IOException {
        return walk(reader, new BufferLateness(false));
    }

    /** The same, keeping each processor's largest lateness too. */
    public static BufferLateness byProcessor(EtlReader reader) throws IOException {
        return walk(reader, new BufferLateness(true));
    }

    private static BufferLateness walk(EtlReader reader, BufferLateness l) throws IOException {
        while (reader.next()) {
            reader.walk(l::onEvent);
            l.endBuffer(reader.header().processor());
        }
        return l;
    }

    /** Walks a whole file. */
    public static BufferLateness of(Path file) throws IOException {
        try (EtlReader r = EtlReader.open(file)) {
            return of(r);
        }
    }
}
