package io.swapstream.export;

import io.swapstream.decode.event.CSwitchEvent;
import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.FileBytes;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.LogfileHeaderBytes;
import io.swapstream.etw.SessionClock;
import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One session's buffers of a time range as an .etl file: the logfile header's buffer, the buffers of the rundown (its
 * process and thread DCStart events name what ran as the session began), the buffers holding the start of every process
 * and thread that still lives as the range begins (its name and process), every buffer with an event in the range, and on each processor the buffer
 * before its first in the range (what ran there as the range begins) and the one after its last, and for each thread
 * the buffer of its last switch and of its last readying before the range (where a wait or ready time that runs into
 * the range began), all whole and in file order. The logfile
 * header's BuffersWritten, EndTime, EventsLost and BuffersLost are rewritten for the file written.
 *
 * <p>Two passes over the session's records, so that memory stays at a few buffers whatever the session's size: the
 * first decides which buffers go (a bit each), the second writes them.
 */
public final class RangeExport {
    /** What the first pass found: the buffers to write, and what the header is to say of them. */
    public record Plan(BitSet include, long inRange, long lastEventNanos, boolean eventsLost, boolean buffersLost) {}

    /** A session's buffers in file order, handed to a sink: the topic's (a {@link RawSessionReader}), or a file's. */
    public interface Buffers {
        void each(RawSessionReader.Sink sink) throws IOException;
    }

    private RangeExport() {}

    public static Plan plan(RawSessionReader reader, String session, boolean fromBeginning, long fromNanos, long toNanos) throws IOException {
        return plan(sink -> reader.read(session, fromBeginning, sink), session, fromNanos, toNanos);
    }

    public static Plan plan(Buffers buffers, String session, long fromNanos, long toNanos) throws IOException {
        BitSet include = new BitSet();
        Map<Integer, Long> lastBefore = new HashMap<>();
        Map<Integer, Boolean> reached = new HashMap<>();
        Map<Integer, Boolean> leftRange = new HashMap<>();
        long[] margin = {0};
        List<long[]> starts = new ArrayList<>();
        Map<Long, List<Long>> ends = new HashMap<>();
        // by thread id: {buffer index, time} of its last switch (in or out) and of its last readying before the range
        Map<Integer, long[]> lastSwitch = new HashMap<>();
        Map<Integer, long[]> lastReady = new HashMap<>();
        BufferDecoder decoder = new BufferDecoder();
        SessionClock[] clock = new SessionClock[1];
        long[] inRange = {0};
        long[] last = {Long.MIN_VALUE};
        boolean[] lost = new boolean[2];
        buffers.each(b -> {
            int index = (int) b.index();
            decoder.load(session, b.fileOffset(), b.bytes(), 0, b.bytes().length);
            if (index == 0) {
                LogfileHeader h = LogfileHeader.find(decoder);
                if (h == null) throw new RawSessionReader.Unavailable("session " + session + ": its first buffer holds no logfile header");
                clock[0] = SessionClock.of(h);
                decoder.loggerBufferSize(h.bufferSize());
                // a compact batch is stamped once for switches up to the batch age limit (TimerResolution) apart
                margin[0] = Math.max(0, h.timerResolution()) * 100L;
            }
            long[] span = {Long.MAX_VALUE, Long.MIN_VALUE};
            boolean[] names = {false};
            decoder.walk(ev -> {
                if (ev.timestamp() <= 0 || LogfileHeader.isHeaderEvent(ev)) return;
                long t = clock[0].toUnixNanos(ev.timestamp());
                span[0] = Math.min(span[0], t);
                span[1] = Math.max(span[1], t);
                if (t >= toNanos) return;
                int hook = ev.hookId();
                if (t < fromNanos) lastSwitches(ev, index, t, clock[0], fromNanos, lastSwitch, lastReady);
                if (hook == ProcessEvent.START || hook == ThreadEvent.START || hook == ProcessEvent.END || hook == ThreadEvent.END) {
                    try {
                        long key = hook == ProcessEvent.START || hook == ProcessEvent.END
                                ? (1L << 32) | (ProcessEvent.decode(ev).processId() & 0xFFFFFFFFL)
                                : ThreadEvent.decode(ev).threadId() & 0xFFFFFFFFL;
                        if (hook == ProcessEvent.START || hook == ThreadEvent.START) starts.add(new long[] {index, key, t});
                        else if (t < fromNanos) ends.computeIfAbsent(key, x -> new ArrayList<>()).add(t);
                    } catch (RuntimeException e) {
                        names[0] = true; // an event that does not decode: kept, for whoever reads the file
                    }
                } else if (ProcessEvent.handles(hook) || ThreadEvent.handles(hook)) {
                    names[0] = true; // the rundown (DCStart, DCEnd) and thread names: few, and they name what runs
                }
            });
            int cpu = b.header().processor();
            boolean within = span[1] >= fromNanos - margin[0] && span[0] < toNanos + margin[0];
            if (!within && span[0] != Long.MAX_VALUE && span[0] >= toNanos && reached.containsKey(cpu) && !leftRange.containsKey(cpu)) {
                // the buffer after, on each processor: batches and merges of the range's last switches may lie there
                leftRange.put(cpu, true);
                include.set(index);
            }
            if (within) {
                inRange[0]++;
                if (!reached.containsKey(cpu)) {
                    reached.put(cpu, true);
                    Long before = lastBefore.get(cpu);
                    if (before != null) include.set((int) (long) before);
                }
            } else if (span[0] != Long.MAX_VALUE && span[1] < fromNanos) {
                lastBefore.put(cpu, b.index());
            }
            if (index == 0 || within || names[0]) include.set(index);
            if (include.get(index)) {
                if (span[1] != Long.MIN_VALUE) last[0] = Math.max(last[0], Math.min(span[1], toNanos));
                lost[0] |= b.header().eventsLost();
                lost[1] |= b.header().bufferLost();
            }
        });
        // a wait or ready time running into the range is measured from the thread's last switch or readying before it:
        // without that buffer it would be measured from an earlier one. An ended thread's last switch (its Terminated
        // switch-out) ends what the decoder remembers of it, which matters when a new thread takes its id before the
        // range's end. A readying the thread's last switch came after is over (its switch-in may lie in a buffer left
        // out, which would make the readying seem to last into the range).
        Map<Long, List<Long>> startTimes = new HashMap<>();
        for (long[] st : starts) startTimes.computeIfAbsent(st[1], x -> new ArrayList<>()).add(st[2]);
        lastSwitch.forEach((tid, at) -> {
            List<Long> started = startTimes.get(tid & 0xFFFFFFFFL);
            boolean reused = started != null && started.stream().anyMatch(t -> t > at[1]);
            if (reused || alive(ends, tid, at[1])) include.set((int) at[0]);
        });
        lastReady.forEach((tid, at) -> {
            long[] switched = lastSwitch.get(tid);
            if ((switched == null || at[1] > switched[1]) && alive(ends, tid, at[1])) include.set((int) at[0]);
        });
        // a process or thread started before the range's end is named by its start only if it lives at the range's start
        for (long[] st : starts) {
            List<Long> ended = ends.get(st[1]);
            boolean gone = ended != null && ended.stream().anyMatch(e -> e >= st[2] && e < fromNanos);
            if (!gone) include.set((int) st[0]);
        }
        return new Plan(include, inRange[0], last[0], lost[0], lost[1]);
    }

    /**
     * Notes the threads {@code ev} switches or readies before {@code fromNanos}, in buffer {@code index}: a CSwitch's
     * old and new thread, a compact batch's switched-out threads (each packet's; the one a packet switches in is the
     * next packet's, switched out later), a ReadyThread's awakened thread. Not a compact batch's thread table: it may
     * still name a thread that has ended. An event too short for its fields is left to the decoder to report.
     */
    private static void lastSwitches(io.swapstream.etw.TraceEvent ev, int index, long t, SessionClock clock, long fromNanos,
                                     Map<Integer, long[]> lastSwitch, Map<Integer, long[]> lastReady) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        switch (ev.hookId()) {
            case CSwitchEvent.HOOK_ID -> {
                if (ev.payloadLength() < CSwitchEvent.SIZE) return;
                note(lastSwitch, CSwitchEvent.newThreadId(d, p), index, t);
                note(lastSwitch, CSwitchEvent.oldThreadId(d, p), index, t);
            }
            case CompactBatchDecoder.HOOK_ID -> {
                try {
                    // the wait reasons' boundary only sorts states from reasons, which this does not read
                    CompactBatchDecoder.decode(d, p, ev.payloadLength(), Integer.MAX_VALUE, (kind, ts, oldTid, prio, state, reason, wait, slot) -> {
                        long at = clock.toUnixNanos(ts);
                        if (at < fromNanos) note(lastSwitch, oldTid, index, at);
                    });
                } catch (RuntimeException e) {
                    // a malformed batch: the decoder reports it; what it held before the fault is noted
                }
            }
            case ReadyThread.HOOK_ID -> {
                if (ev.payloadLength() < ReadyThread.PAYLOAD_BYTES) return;
                note(lastReady, ReadyThread.awakenedThreadId(d, p), index, t);
            }
            default -> { }
        }
    }

    /** Whether thread {@code tid} has no end before the range from {@code since} on. */
    private static boolean alive(Map<Long, List<Long>> ends, int tid, long since) {
        List<Long> ended = ends.get(tid & 0xFFFFFFFFL);
        return ended == null || ended.stream().noneMatch(e -> e >= since);
    }

    private static void note(Map<Integer, long[]> last, int tid, int index, long t) {
        if (tid == 0) return; // the idle thread: no wait to measure
        long[] at = last.get(tid);
        if (at == null) last.put(tid, new long[] {index, t});
        else if (t >= at[1]) {
            at[0] = index;
            at[1] = t;
        }
    }

    /**
     * Writes the planned buffers to {@code out}, the logfile header's buffer rewritten for them; returns the buffers
     * written. The plan knows every count, so nothing is written twice and {@code out} may be a network stream.
     */
    public static long write(RawSessionReader reader, String session, boolean fromBeginning, Plan plan, OutputStream out)
            throws IOException {
        return write(sink -> reader.read(session, fromBeginning, sink), session, plan, out);
    }

    public static long write(Buffers buffers, String session, Plan plan, OutputStream out) throws IOException {
        long[] written = {0};
        int count = plan.include().cardinality();
        buffers.each(b -> {
            if (!plan.include().get((int) b.index())) return;
            byte[] bytes = b.bytes();
            if (b.index() == 0) {
                if (b.header().compressed()) {
                    throw new RawSessionReader.Unavailable("session " + session + ": its first buffer is compressed; its header cannot be rewritten");
                }
                rewriteHeader(session, bytes, count, plan);
            }
            out.write(bytes);
            written[0]++;
        });
        out.flush();
        return written[0];
    }

    /** The logfile header in the first buffer {@code bytes}, made true for a file of {@code count} buffers. */
    private static void rewriteHeader(String session, byte[] bytes, int count, Plan plan) {
        rewriteHeader(session, bytes, count, plan.lastEventNanos(), plan.eventsLost(), plan.buffersLost());
    }

    /**
     * Rewrites the logfile header in the first buffer {@code bytes} for a file of {@code count} buffers whose last event is
     * at {@code lastEventNanos} (Unix; {@link Long#MIN_VALUE} keeps its EndTime), as its logger does when it stops; its
     * loss counts are kept or zeroed.
     */
    public static void rewriteHeader(String session, byte[] bytes, int count, long lastEventNanos, boolean eventsLost,
                                     boolean buffersLost) {
        LogfileHeaderBytes h = LogfileHeaderBytes.locate(session, bytes);
        if (h == null) throw new RawSessionReader.Unavailable("session " + session + ": no logfile header in its first buffer");
        LogfileHeader original = h.header();
        h.endTime(lastEventNanos == Long.MIN_VALUE ? original.endTime() : lastEventNanos / 100 + SessionClock.FILETIME_UNIX_EPOCH)
                .buffersWritten(count)
                .eventsLost(eventsLost ? original.eventsLost() : 0)
                .buffersLost(buffersLost ? original.buffersLost() : 0);
    }

    /**
     * Ends the file {@code file}, of {@code buffers} buffers whose latest time stamp is {@code lastTimestamp} (the session's
     * raw clock), as its logger does when it stops: its first buffer's logfile header gets the count and the EndTime, unless
     * it already says so ({@link LogfileHeader#cutShort} finds nothing) or that buffer is compressed.
     */
    public static void finishHeader(java.nio.file.Path file, int buffers, long lastTimestamp) throws IOException {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE)) {
            ByteBuffer head = ByteBuffer.allocate(BufferHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
            FileBytes.readFully(ch, head, 0);
            BufferHeader firstHeader = BufferHeader.read(head, 0, 0);
            if (firstHeader.compressed()) return;
            byte[] first = new byte[firstHeader.bufferSize()];
            ByteBuffer b = ByteBuffer.wrap(first);
            FileBytes.readFully(ch, b, 0);
            LogfileHeaderBytes h = LogfileHeaderBytes.locate(file.toString(), first);
            if (h == null || h.header().cutShort(buffers) == null) return;
            long endNanos = SessionClock.of(h.header()).toUnixNanos(lastTimestamp);
            h.endTime(endNanos / 100 + SessionClock.FILETIME_UNIX_EPOCH).buffersWritten(buffers);
            b = ByteBuffer.wrap(first);
            while (b.hasRemaining()) ch.write(b, b.position());
        }
    }
}
