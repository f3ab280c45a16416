package io.swapstream.http;

import io.swapstream.decode.ProcessEvent;
import io.swapstream.decode.ThreadEvent;

import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.io.OutputStream;
import java.util.BitSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One session's buffers of a time range as an .etl file: the logfile header's buffer, the buffers of the rundown (its
 * process and thread DCStart events name what ran as the session began), the buffers holding the start of every process
 * and thread that still lives as the range begins (its name and process), every buffer with an event in the range, and on each processor the buffer
 * before its first in the range (what ran there as the range begins) and the one after its last, all whole and in
 * file order. The logfile
 * header's BuffersWritten, EndTime, EventsLost and BuffersLost are rewritten for the file written.
 *
 * <p>Two passes over the session's records, so that memory stays at a few buffers whatever the session's size: the
 * first decides which buffers go (a bit each), the second writes them.
 */
public final class RangeExport {
    /** What the first pass found: the buffers to write, and what the header is to say of them. */
    public record Plan(BitSet include, long inRange, long lastEventNanos, boolean eventsLost, boolean buffersLost) {}

    private RangeExport() {}

    public static Plan plan(RawSessionReader reader, String session, boolean fromBeginning, long fromNanos, long toNanos) throws IOException {
        BitSet include = new BitSet();
        Map<Integer, Long> lastBefore = new HashMap<>();
        Map<Integer, Boolean> reached = new HashMap<>();
        Map<Integer, Boolean> leftRange = new HashMap<>();
        long[] margin = {0};
        List<long[]> starts = new ArrayList<>();
        Map<Long, List<Long>> ends = new HashMap<>();
        BufferDecoder decoder = new BufferDecoder();
        SessionClock[] clock = new SessionClock[1];
        long[] inRange = {0};
        long[] last = {Long.MIN_VALUE};
        boolean[] lost = new boolean[2];
        reader.read(session, fromBeginning, b -> {
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
        // a process or thread started before the range's end is named by its start only if it lives at the range's start
        for (long[] st : starts) {
            List<Long> ended = ends.get(st[1]);
            boolean gone = ended != null && ended.stream().anyMatch(e -> e >= st[2] && e < fromNanos);
            if (!gone) include.set((int) st[0]);
        }
        return new Plan(include, inRange[0], last[0], lost[0], lost[1]);
    }

    /**
     * Writes the planned buffers to {@code out}, the logfile header's buffer rewritten for them; returns the buffers
     * written. The plan knows every count, so nothing is written twice and {@code out} may be a network stream.
     */
    public static long write(RawSessionReader reader, String session, boolean fromBeginning, Plan plan, OutputStream out)
            throws IOException {
        long[] written = {0};
        int count = plan.include().cardinality();
        reader.read(session, fromBeginning, b -> {
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
        BufferDecoder d = new BufferDecoder();
        d.load(session, 0, bytes, 0, bytes.length);
        int[] payload = {-1};
        int[] pointerSize = {8};
        LogfileHeader[] original = new LogfileHeader[1];
        d.walk(ev -> {
            if (payload[0] < 0 && LogfileHeader.isHeaderEvent(ev)) {
                payload[0] = ev.payloadOffset();
                pointerSize[0] = ev.pointerSize();
                original[0] = LogfileHeader.parse(ev, d);
            }
        });
        if (payload[0] < 0) throw new RawSessionReader.Unavailable("session " + session + ": no logfile header in its first buffer");
        // an uncompressed buffer's events lie in it as in the file: the payload's offset is the same in the bytes
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int p = payload[0];
        long endTime = plan.lastEventNanos() == Long.MIN_VALUE ? original[0].endTime()
                : plan.lastEventNanos() / 100 + SessionClock.FILETIME_UNIX_EPOCH;
        b.putLong(p + 0x10, endTime);
        b.putInt(p + 0x24, count);
        b.putInt(p + 0x30, plan.eventsLost() ? original[0].eventsLost() : 0);
        b.putInt(p + (pointerSize[0] == 8 ? 0x114 : 0x10C), plan.buffersLost() ? original[0].buffersLost() : 0);
    }
}
