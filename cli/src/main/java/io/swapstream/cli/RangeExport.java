package io.swapstream.cli;

import io.swapstream.decode.ProcessEvent;
import io.swapstream.decode.ThreadEvent;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import io.swapstream.etw.TraceEvent;
import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * One session's buffers of a time range as an .etl file: the logfile header's buffer, every buffer holding a process
 * or thread event before the range's end (the rundown at the session's start names the processes and threads; later
 * starts and ends keep the names true), every buffer with an event in the range, and on each processor the buffer
 * before its first in the range (what ran there as the range begins) and the one after its last, all whole and in
 * file order. The logfile
 * header's BuffersWritten, EndTime, EventsLost and BuffersLost are rewritten for the file written.
 *
 * <p>Two passes over the session's records, so that memory stays at a few buffers whatever the session's size: the
 * first decides which buffers go (a bit each), the second writes them.
 */
final class RangeExport {
    /** What the first pass found: the buffers to write, and what the header is to say of them. */
    record Plan(BitSet include, long inRange, long lastEventNanos, boolean eventsLost, boolean buffersLost) {}

    private RangeExport() {}

    static Plan plan(RawSessionReader reader, String session, boolean fromBeginning, long fromNanos, long toNanos) throws IOException {
        BitSet include = new BitSet();
        Map<Integer, Long> lastBefore = new HashMap<>();
        Map<Integer, Boolean> reached = new HashMap<>();
        Map<Integer, Boolean> leftRange = new HashMap<>();
        long[] margin = {0};
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
                if ((ProcessEvent.handles(ev.hookId()) || ThreadEvent.handles(ev.hookId())) && t < toNanos) names[0] = true;
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
        return new Plan(include, inRange[0], last[0], lost[0], lost[1]);
    }

    /** Writes the planned buffers to {@code out} and rewrites its logfile header; returns the buffers written. */
    static long write(RawSessionReader reader, String session, boolean fromBeginning, Plan plan, Path out) throws IOException {
        long[] written = {0};
        int[] payload = {-1};
        int[] pointerSize = {8};
        LogfileHeader[] original = new LogfileHeader[1];
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            reader.read(session, fromBeginning, b -> {
                if (!plan.include().get((int) b.index())) return;
                if (b.index() == 0) {
                    if (b.header().compressed()) {
                        throw new RawSessionReader.Unavailable("session " + session + ": its first buffer is compressed; its header cannot be rewritten");
                    }
                    BufferDecoder d = new BufferDecoder();
                    d.load(session, 0, b.bytes(), 0, b.bytes().length);
                    d.walk(ev -> {
                        if (payload[0] < 0 && LogfileHeader.isHeaderEvent(ev)) {
                            payload[0] = ev.payloadOffset();
                            pointerSize[0] = ev.pointerSize();
                            original[0] = LogfileHeader.parse(ev, d);
                        }
                    });
                }
                ByteBuffer bb = ByteBuffer.wrap(b.bytes());
                while (bb.hasRemaining()) ch.write(bb);
                written[0]++;
            });
            if (payload[0] < 0) {
                throw new IllegalStateException("session " + session + ": no logfile header found in its first buffer");
            }
            // the header buffer is never compressed: its event's payload sits at the same place in the file
            ByteBuffer f = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            long endTime = plan.lastEventNanos() == Long.MIN_VALUE ? original[0].endTime()
                    : plan.lastEventNanos() / 100 + SessionClock.FILETIME_UNIX_EPOCH;
            put(ch, f.clear().putLong(endTime), payload[0] + 0x10);
            put(ch, f.clear().putInt((int) written[0]), payload[0] + 0x24);
            put(ch, f.clear().putInt(plan.eventsLost() ? original[0].eventsLost() : 0), payload[0] + 0x30);
            put(ch, f.clear().putInt(plan.buffersLost() ? original[0].buffersLost() : 0), payload[0] + (pointerSize[0] == 8 ? 0x114 : 0x10C));
            ch.force(true);
        }
        return written[0];
    }

    private static void put(FileChannel ch, ByteBuffer b, long at) throws IOException {
        b.flip();
        while (b.hasRemaining()) ch.write(b, at + b.position());
    }
}
