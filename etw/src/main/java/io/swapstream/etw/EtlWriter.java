package io.swapstream.etw;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes real ETL bytes the way the kernel lays them out: a HEADER buffer holding the
 * TRACE_LOGFILE_HEADER event, then per-processor buffers of 8-byte-aligned events, flushed when
 * full. The writing half of docs/etw-formats.md §1-§3, used by the trace generator and by tests.
 */
public final class EtlWriter implements Closeable {

    /** Session facts written into the logfile header (64-bit layout). */
    public record Session(int bufferSize, int build, int numberOfProcessors, int clockType, long perfFreq,
                          int cpuSpeedInMHz, long startTimeFileTime, long bootTimeFileTime, int logFileMode,
                          String loggerName, String logFileName) {
        public static Session defaults(int processors, long startTimeFileTime) {
            return new Session(64 * 1024, 19041, processors, ClockType.PERFCOUNTER, 10_000_000L, 2995,
                    startTimeFileTime, startTimeFileTime - 36_000_000_000L, 0x00000001, "NT Kernel Logger",
                    "swapstream-generated.etl");
        }
    }

    private final FileChannel out;
    private final Session session;
    private final Map<Integer, ByteBuffer> open = new HashMap<>();
    private final long ts0;
    private long sequence = 1;
    private int buffersWritten;
    private long lastTimestamp;
    private long eventsLostOverride = -1;

    public EtlWriter(Path file, Session session, long ts0) throws IOException {
        this.out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        this.session = session;
        this.ts0 = ts0;
        this.lastTimestamp = ts0;
        writeHeaderBuffer(0);
    }

    public Session session() { return session; }

    /** Appends a SYSTEM64 event (Process, Thread and other classic kernel events). */
    public void systemEvent(int cpu, int hookId, int version, int threadId, int processId, long ts, byte[] payload) {
        int size = 0x20 + payload.length;
        ByteBuffer b = reserve(cpu, size);
        int p = b.position();
        b.putInt(p, 0xC0020000 | (version & 0xFF));
        b.putShort(p + 4, (short) size);
        b.putShort(p + 6, (short) hookId);
        b.putInt(p + 8, threadId);
        b.putInt(p + 0xC, processId);
        b.putLong(p + 0x10, ts);
        b.put(p + 0x20, payload);
        advance(b, size, ts);
    }

    /**
     * Appends a PERFINFO64 event. {@code pmc} (may be null or empty) and {@code pebsIndex} (null
     * for none) become extended items, PEBS index first (see BufferDecoder).
     */
    public void perfInfoEvent(int cpu, int hookId, int version, long ts, long[] pmc, Long pebsIndex, byte[] payload,
                              int payloadLength) {
        int n = pmc == null ? 0 : pmc.length;
        if (n > 7) throw new IllegalArgumentException("at most 7 PMC counters");
        int ext = 8 * n + (pebsIndex != null ? 8 : 0);
        int size = 0x10 + ext + payloadLength;
        ByteBuffer b = reserve(cpu, size);
        int p = b.position();
        int marker = 0xC0110000 | (version & 0xFF) | (n << 8) | (pebsIndex != null ? 0x8000 : 0);
        b.putInt(p, marker);
        b.putShort(p + 4, (short) size);
        b.putShort(p + 6, (short) hookId);
        b.putLong(p + 8, ts);
        int q = p + 0x10;
        if (pebsIndex != null) {
            b.putLong(q, pebsIndex);
            q += 8;
        }
        for (int i = 0; i < n; i++) {
            b.putLong(q, pmc[i]);
            q += 8;
        }
        b.put(q, payload, 0, payloadLength);
        advance(b, size, ts);
    }

    /** Appends a minimal EVENT_HEADER64 event (a manifest provider's event), for traces with unrelated events. */
    public void eventHeaderEvent(int cpu, long ts, int threadId, int processId, int eventId, byte[] payload) {
        int size = 0x50 + payload.length;
        ByteBuffer b = reserve(cpu, size);
        int p = b.position();
        b.putShort(p, (short) size);
        b.putShort(p + 2, (short) 0xC013);
        b.putInt(p + 8, threadId);
        b.putInt(p + 0xC, processId);
        b.putLong(p + 0x10, ts);
        b.putLong(p + 0x18, 0x5377617073747265L); // provider GUID: any fixed value
        b.putShort(p + 0x28, (short) eventId);
        b.put(p + 0x50, payload);
        advance(b, size, ts);
    }

    /** Flushes every processor's partly filled buffer, as the kernel's flush timer does. */
    public void flushAll() {
        open.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> flush(e.getKey(), e.getValue()));
        open.clear();
    }

    private ByteBuffer reserve(int cpu, int size) {
        if (size > 0xFFFF || size > session.bufferSize() - BufferHeader.SIZE) {
            throw new IllegalArgumentException("event of " + size + " bytes does not fit a buffer");
        }
        ByteBuffer b = open.get(cpu);
        if (b == null) {
            b = newBuffer();
            open.put(cpu, b);
        } else if (b.remaining() < size) {
            flush(cpu, b);
            b = newBuffer();
            open.put(cpu, b);
        }
        return b;
    }

    private ByteBuffer newBuffer() {
        ByteBuffer b = ByteBuffer.allocate(session.bufferSize()).order(ByteOrder.LITTLE_ENDIAN);
        b.position(BufferHeader.SIZE);
        return b;
    }

    private void advance(ByteBuffer b, int size, long ts) {
        int end = b.position() + size;
        b.position(Math.min(b.limit(), (end + 7) & ~7));
        b.putInt(BufferHeader.SIZE - 4, end); // remember the unpadded end of the last event here until flush
        if (ts > lastTimestamp) lastTimestamp = ts;
    }

    private void flush(int cpu, ByteBuffer b) {
        int fill = b.getInt(BufferHeader.SIZE - 4);
        b.putInt(BufferHeader.SIZE - 4, 0);
        writeBuffer(b, cpu, fill, BufferHeader.TYPE_GENERIC, lastTimestamp);
    }

    private void writeBuffer(ByteBuffer b, int cpu, int fill, int type, long ts) {
        // past the fill mark the kernel writes 0xFF: every buffer of the 19 real files with room left does
        java.util.Arrays.fill(b.array(), b.arrayOffset() + fill, b.arrayOffset() + b.capacity(), (byte) 0xFF);
        b.putInt(0x00, session.bufferSize());
        b.putInt(0x04, fill);
        b.putLong(0x10, ts);
        b.putLong(0x18, type == BufferHeader.TYPE_HEADER ? 0 : sequence++);
        b.putShort(0x28, (short) (cpu & 0x7FF));
        b.putInt(0x30, fill);
        b.putShort(0x34, (short) BufferHeader.FLAG_PROC_INDEX);
        b.putShort(0x36, (short) type);
        try {
            long at = type == BufferHeader.TYPE_HEADER ? 0 : Math.max(out.size(), session.bufferSize());
            ByteBuffer whole = b.duplicate().clear();
            while (whole.hasRemaining()) at += out.write(whole, at);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        if (type != BufferHeader.TYPE_HEADER) buffersWritten++;
    }

    private void writeHeaderBuffer(long endTimeFileTime) {
        ByteBuffer b = newBuffer();
        byte[] payload = logfileHeaderPayload(endTimeFileTime);
        int size = 0x20 + payload.length;
        int p = BufferHeader.SIZE;
        b.putInt(p, 0xC0020002);
        b.putShort(p + 4, (short) size);
        b.putShort(p + 6, (short) LogfileHeader.HOOK_ID);
        b.putLong(p + 0x10, ts0);
        b.put(p + 0x20, payload);
        writeBuffer(b, 0, p + size, BufferHeader.TYPE_HEADER, ts0);
    }

    /** Makes the header record a number of lost events (for loss-reporting tests). */
    public void setEventsLost(long n) { eventsLostOverride = n; }

    private byte[] logfileHeaderPayload(long endTime) {
        byte[] name = (session.loggerName() + "\0").getBytes(StandardCharsets.UTF_16LE);
        byte[] file = (session.logFileName() + "\0").getBytes(StandardCharsets.UTF_16LE);
        ByteBuffer h = ByteBuffer.allocate(0x118 + name.length + file.length).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0x00, session.bufferSize());
        h.put(0x04, (byte) 10).put(0x05, (byte) 0);
        h.putInt(0x08, session.build());
        h.putInt(0x0C, session.numberOfProcessors());
        h.putLong(0x10, endTime);
        h.putInt(0x18, 156250);
        h.putInt(0x20, session.logFileMode());
        h.putInt(0x24, buffersWritten + 1);
        h.putInt(0x2C, 8);
        h.putInt(0x30, (int) Math.max(0, eventsLostOverride));
        h.putInt(0x34, session.cpuSpeedInMHz());
        h.putLong(0xF8, session.bootTimeFileTime());
        h.putLong(0x100, session.perfFreq());
        h.putLong(0x108, session.startTimeFileTime());
        h.putInt(0x110, session.clockType());
        h.put(0x118, name);
        h.put(0x118 + name.length, file);
        return h.array();
    }

    /** Flushes every processor's open buffer, then rewrites the header with EndTime and counts. */
    @Override
    public void close() throws IOException {
        if (!out.isOpen()) return;
        try {
            flushAll();
            long d = lastTimestamp - ts0;
            long f = Math.max(1, ticksPerSecond());
            long endTime = session.startTimeFileTime() + d / f * 10_000_000L + d % f * 10_000_000L / f;
            writeHeaderBuffer(session.clockType() == ClockType.SYSTEMTIME ? lastTimestamp : endTime);
        } finally {
            out.close();
        }
    }

    private long ticksPerSecond() {
        return switch (session.clockType()) {
            case ClockType.CPUCYCLE -> session.cpuSpeedInMHz() * 1_000_000L;
            case ClockType.SYSTEMTIME -> 10_000_000L;
            default -> session.perfFreq();
        };
    }
}
