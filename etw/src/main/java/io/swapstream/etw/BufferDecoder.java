package io.swapstream.etw;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Validates one raw buffer (exactly as the kernel wrote it), decompresses it when needed and
 * walks its events. Holds scratch space reused across buffers: one instance per thread.
 */
public final class BufferDecoder {
    /**
     * The most a compressed buffer may claim before its logger's BufferSize is known: 16 MiB, a
     * sixteenth of what the cap was when the first buffer's claim alone was looked at, and 16 times the
     * largest BufferSize seen in the real files (1 MiB).
     */
    public static final int MAX_EXPANDED_BUFFER = 16 << 20;
    /**
     * The most the compressed buffers of one file or session may expand to, per byte taken (every
     * buffer's bytes, compressed or not): the real files' XPRESS buffers expand 1.2 to 13.6 times, 4.7
     * overall. With {@link #MAX_EXPANDED_BUFFER} this bounds the work per input byte whatever the input
     * claims (docs/etw-formats.md §1).
     */
    public static final int MAX_EXPANSION = 64;

    private byte[] scratch = new byte[64 * 1024];
    private ByteBuffer scratchView = wrap(scratch);
    private final TraceEvent event = new TraceEvent();
    private BufferHeader header;
    private ByteBuffer data;
    private String source;
    /** File offset of data()[0] when the buffer is not compressed, else -1. */
    private long dataFileOffset;
    /** The most one compressed buffer may expand to: its logger's BufferSize once known. */
    private int expandedLimit = MAX_EXPANDED_BUFFER;
    /** Bytes of every buffer loaded, and what the compressed ones among them expanded to. */
    private long bytesTaken;
    private long bytesExpanded;

    private static ByteBuffer wrap(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Checks the header of the raw buffer in {@code raw[off, off+len)} and prepares its event data.
     *
     * @param source     file name (or other origin) used in error messages
     * @param fileOffset where the buffer starts in its file, for error messages
     */
    public BufferHeader load(String source, long fileOffset, byte[] raw, int off, int len) {
        return load(source, fileOffset, raw, off, len, false);
    }

    /**
     * As {@link #load}, for a buffer as a publisher sends it: an uncompressed one may end at its fill
     * mark, its filler left out ({@link BufferFiller}).
     */
    public BufferHeader loadPublished(String source, long fileOffset, byte[] raw, int off, int len) {
        return load(source, fileOffset, raw, off, len, true);
    }

    private BufferHeader load(String source, long fileOffset, byte[] raw, int off, int len, boolean published) {
        this.source = source;
        if (len < BufferHeader.SIZE) {
            throw new EtlFormatException(source, fileOffset, "buffer of " + len + " bytes is shorter than a buffer header (72 bytes)");
        }
        ByteBuffer rawView = wrap(raw);
        BufferHeader h = BufferHeader.read(rawView, off, fileOffset);
        long available = len;
        if (published && !h.compressed() && len < h.bufferSize()) {
            if (len < h.fillMark() && h.fillMark() <= h.bufferSize()) {
                throw new EtlFormatException(source, fileOffset + len, "buffer of " + len + " bytes ends before its fill mark "
                        + h.fillMark() + ": truncated");
            }
            available = h.bufferSize(); // its filler left out
        }
        checkHeader(source, h, available);
        bytesTaken += len;
        if (h.compressed()) {
            checkExpansion(source, h);
            int expected = h.fillMark() - BufferHeader.SIZE;
            ensureScratch(h.fillMark());
            System.arraycopy(raw, off, scratch, 0, BufferHeader.SIZE);
            try {
                XpressLz77Decoder.decode(raw, off + BufferHeader.SIZE, off + h.bufferSize(), scratch, BufferHeader.SIZE, expected);
            } catch (XpressLz77Decoder.CorruptInputException e) {
                throw new EtlFormatException(source, fileOffset + (e.inputOffset - off),
                        "corrupt compressed buffer (XPRESS LZ77): " + e.getMessage());
            }
            bytesExpanded += h.fillMark();
            data = scratchView;
            data.limit(scratch.length).position(0);
            dataFileOffset = -1;
        } else {
            data = off == 0 ? rawView : wrap(raw).position(off).slice().order(ByteOrder.LITTLE_ENDIAN);
            dataFileOffset = fileOffset;
        }
        header = h;
        return h;
    }

    /** The header checks of §1, shared by the file splitter and the streams. */
    static void checkHeader(String source, BufferHeader h, long available) {
        long at = h.fileOffset();
        if (h.bufferSize() < BufferHeader.SIZE) {
            throw new EtlFormatException(source, at, "buffer size " + Integer.toUnsignedString(h.bufferSize())
                    + " is smaller than a buffer header: not an ETL buffer");
        }
        if (h.bufferSize() > available) {
            throw new EtlFormatException(source, at, "buffer size " + h.bufferSize() + " runs past the end of the data ("
                    + available + " bytes left): truncated");
        }
        int fill = h.fillMark();
        if (fill < BufferHeader.SIZE) {
            throw new EtlFormatException(source, at + 0x30, "fill mark " + Integer.toUnsignedString(fill) + " is smaller than a buffer header");
        }
        if (!h.compressed() && fill > h.bufferSize()) {
            throw new EtlFormatException(source, at + 0x30, "fill mark " + fill + " is past the buffer size " + h.bufferSize());
        }
        if (h.compressed() && Integer.toUnsignedLong(fill) > MAX_EXPANDED_BUFFER) {
            throw new EtlFormatException(source, at + 0x30, "compressed buffer claims " + fill + " bytes uncompressed: corrupt");
        }
    }

    /**
     * A compressed buffer may claim no more than its logger could have filled, and a file's or session's
     * compressed buffers no more than {@link #MAX_EXPANSION} times the bytes taken: refused before any
     * work, so a small input cannot make a long one.
     */
    private void checkExpansion(String source, BufferHeader h) {
        long fill = Integer.toUnsignedLong(h.fillMark());
        if (fill > expandedLimit) {
            throw new EtlFormatException(source, h.fileOffset() + 0x30, "compressed buffer claims " + fill
                    + " bytes uncompressed, more than its logger's buffer size " + expandedLimit + ": corrupt");
        }
        // the slack of two whole buffers lets a session's first compressed buffers follow a small header buffer
        if (bytesExpanded + fill > MAX_EXPANSION * bytesTaken + 2L * expandedLimit) {
            throw new EtlFormatException(source, h.fileOffset() + 0x30, "compressed buffers would expand to "
                    + (bytesExpanded + fill) + " bytes from " + bytesTaken + " bytes taken, more than " + MAX_EXPANSION
                    + " times: refused as a decompression bomb");
        }
    }

    /**
     * The logger's BufferSize, from its logfile header: no compressed buffer of its session expands past
     * it. Values outside [0x48, {@link #MAX_EXPANDED_BUFFER}] leave the cap at the latter.
     */
    public void loggerBufferSize(int bufferSize) {
        expandedLimit = bufferSize >= BufferHeader.SIZE && bufferSize <= MAX_EXPANDED_BUFFER ? bufferSize : MAX_EXPANDED_BUFFER;
    }

    /** The same input read again from its start (a file walked for its lateness, then decoded) is bounded as the first time. */
    public void restartExpansion() {
        bytesTaken = 0;
        bytesExpanded = 0;
    }

    private void ensureScratch(int n) {
        if (scratch.length < n) {
            scratch = new byte[Math.max(n, scratch.length * 2)];
            scratchView = wrap(scratch);
        }
    }

    public BufferHeader header() { return header; }

    /** The loaded buffer's data: header at 0, events from 0x48 to the fill mark. */
    public ByteBuffer data() { return data; }

    /** Walks every event of the loaded buffer, in buffer order. */
    public void walk(TraceEventHandler handler) {
        final ByteBuffer d = data;
        final TraceEvent ev = event;
        final int end = header.fillMark();
        ev.data = d;
        ev.buffer = header;
        int p = BufferHeader.SIZE;
        while (p < end) {
            if (end - p < 4) break;
            int marker = d.getInt(p);
            if (marker == 0 || marker == -1) break;
            if ((marker & 0x80000000) == 0) {
                throw error(p, "0x" + Integer.toHexString(marker) + " is not an event marker (high flag bit clear)");
            }
            TraceHeaderType type = TraceHeaderType.of((marker >>> 16) & 0xFF);
            if (type == null) {
                throw error(p, "unknown trace header type 0x" + Integer.toHexString((marker >>> 16) & 0xFF)
                        + " in marker 0x" + Integer.toHexString(marker));
            }
            int size;
            if (type.kernel) {
                if (end - p < 8) throw error(p, "event header runs past the fill mark " + end);
                size = Short.toUnsignedInt(d.getShort(p + 4));
            } else {
                size = marker & 0xFFFF;
            }
            if (size < Math.max(type.fixedSize, 4)) {
                throw error(p, type + " event size " + size + " is smaller than its header");
            }
            if (size > end - p) {
                throw error(p, type + " event of " + size + " bytes runs past the fill mark " + end);
            }
            fill(ev, d, p, size, type, marker);
            handler.onEvent(ev);
            p += (size + 7) & ~7;
        }
    }

    private void fill(TraceEvent ev, ByteBuffer d, int p, int size, TraceHeaderType type, int marker) {
        ev.offset = p;
        ev.size = size;
        ev.headerType = type;
        ev.marker = marker;
        ev.pmcCount = 0;
        ev.pebsOffset = -1;
        switch (type) {
            case SYSTEM32, SYSTEM64, COMPACT32, COMPACT64 -> {
                ev.hookId = Short.toUnsignedInt(d.getShort(p + 6));
                ev.threadId = d.getInt(p + 8);
                ev.processId = d.getInt(p + 0xC);
                ev.timestamp = d.getLong(p + 0x10);
                ev.payloadOffset = p + type.fixedSize;
                extendedItems(ev, d, p, size, marker);
            }
            case PERFINFO32, PERFINFO64 -> {
                ev.hookId = Short.toUnsignedInt(d.getShort(p + 6));
                ev.threadId = -1;
                ev.processId = -1;
                ev.timestamp = d.getLong(p + 8);
                ev.payloadOffset = p + type.fixedSize;
                extendedItems(ev, d, p, size, marker);
            }
            case EVENT_HEADER32, EVENT_HEADER64, FULL_HEADER32, FULL_HEADER64 -> {
                ev.hookId = -1;
                ev.threadId = d.getInt(p + 8);
                ev.processId = d.getInt(p + 0xC);
                ev.timestamp = d.getLong(p + 0x10);
                ev.payloadOffset = p + type.fixedSize;
            }
            default -> {
                ev.hookId = -1;
                ev.threadId = -1;
                ev.processId = -1;
                ev.timestamp = Long.MIN_VALUE;
                ev.payloadOffset = p + size;
            }
        }
    }

    /**
     * Extended items sit between the header and the payload. Their relative order is open in
     * docs/etw-formats.md §2; adopted: the PEBS index first, then the PMC counters, following the
     * extended-data type numbers (PEBS_INDEX 7 before PMC_COUNTERS 8). The generator writes the same.
     */
    private void extendedItems(TraceEvent ev, ByteBuffer d, int p, int size, int marker) {
        int q = ev.payloadOffset;
        if ((marker & TraceEvent.PEBS_INDEX_FLAG) != 0) {
            ev.pebsOffset = q;
            q += 8;
        }
        int n = (marker & TraceEvent.PMC_COUNTERS_MASK) >>> 8;
        if (n != 0) {
            ev.pmcCount = n;
            ev.pmcOffset = q;
            q += 8 * n;
        }
        if (q > p + size) {
            throw error(p, "extended items (" + (q - ev.payloadOffset) + " bytes) run past the event size " + size);
        }
        ev.payloadOffset = q;
    }

    /** An error at data offset {@code p} of the loaded buffer, located in the file where possible. */
    public EtlFormatException error(int p, String reason) {
        if (dataFileOffset >= 0) return new EtlFormatException(source, dataFileOffset + p, reason);
        return new EtlFormatException(source, header.fileOffset(),
                reason + " (at byte " + p + " of the decompressed buffer)");
    }
}
