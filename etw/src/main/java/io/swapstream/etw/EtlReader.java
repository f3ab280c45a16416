package io.swapstream.etw;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Splits an ETL file (or bytes held in memory) into its buffers, in file order, and loads each
 * into a {@link BufferDecoder}. Streams the file: one buffer in memory at a time.
 */
public final class EtlReader implements Closeable {
    private final String source;
    private final FileChannel channel;
    private final ByteBuffer memory;
    private final long length;
    private final BufferDecoder decoder = new BufferDecoder();
    private byte[] raw = new byte[64 * 1024];
    private ByteBuffer rawView = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
    private long position;
    private long bufferOffset = -1;
    private int rawLength;
    private int index = -1;
    private boolean framesOnly;
    private BufferHeader header;
    private LogfileHeader logfileHeader;

    private EtlReader(String source, FileChannel channel, ByteBuffer memory, long length) {
        this.source = source;
        this.channel = channel;
        this.memory = memory;
        this.length = length;
    }

    public static EtlReader open(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        long size = ch.size();
        if (size == 0) {
            ch.close();
            throw new EtlFormatException(file.toString(), 0, "empty file: not an ETL file");
        }
        return new EtlReader(file.toString(), ch, null, size);
    }

    /** Reads buffers from {@code bytes} (position to limit); nothing is copied until a buffer is loaded. */
    public static EtlReader of(String source, ByteBuffer bytes) {
        if (!bytes.hasRemaining()) throw new EtlFormatException(source, 0, "empty input: not an ETL file");
        return new EtlReader(source, null, bytes.slice().order(ByteOrder.LITTLE_ENDIAN), bytes.remaining());
    }

    /** Splits into buffers without decompressing or checking their events (the ingester publishes them as they are). */
    public EtlReader framesOnly() {
        this.framesOnly = true;
        return this;
    }

    public String source() { return source; }
    public long length() { return length; }
    /** Bytes consumed so far, for progress reporting. */
    public long position() { return position; }

    /**
     * Loads the next buffer; false at the end of the file.
     *
     * @throws EtlFormatException when the buffer is malformed; nothing after it can be framed
     */
    public boolean next() throws IOException {
        if (position >= length) return false;
        long at = position;
        long left = length - at;
        if (left < BufferHeader.SIZE) {
            if (index < 0) {
                throw new EtlFormatException(source, at, left + " bytes, shorter than a buffer header (" + BufferHeader.SIZE
                        + " bytes): not an ETL file");
            }
            throw new EtlFormatException(source, at, left + " trailing bytes are shorter than a buffer header: truncated");
        }
        readFully(at, 0, BufferHeader.SIZE);
        BufferHeader peek = BufferHeader.read(rawView, 0, at);
        if (index < 0 && peek.type() != BufferHeader.TYPE_HEADER) {
            throw new EtlFormatException(source, at + 0x36, "first buffer has type "
                    + BufferHeader.typeName(peek.type()) + ", not HEADER: not an ETL file");
        }
        BufferDecoder.checkHeader(source, peek, left);
        int size = peek.bufferSize();
        ensureRaw(size);
        readFully(at + BufferHeader.SIZE, BufferHeader.SIZE, size - BufferHeader.SIZE);
        rawLength = size;
        bufferOffset = at;
        header = peek;
        if (!framesOnly || index < 0) decoder.load(source, at, raw, 0, size);
        if (index < 0) boundExpansion();
        position = at + size;
        index++;
        return true;
    }

    /** The file's compressed buffers expand to no more than its logger's BufferSize, whoever reads them. */
    private void boundExpansion() {
        try {
            LogfileHeader h = LogfileHeader.find(decoder);
            logfileHeader = h;
            if (h != null) decoder.loggerBufferSize(h.bufferSize());
        } catch (EtlFormatException e) {
            // a header that cannot be read is reported by whoever decodes it, where it is
        }
    }

    private void readFully(long at, int to, int n) throws IOException {
        if (memory != null) {
            memory.get((int) at, raw, to, n);
            return;
        }
        ByteBuffer dst = ByteBuffer.wrap(raw, to, n);
        while (dst.hasRemaining()) {
            if (channel.read(dst, at + (dst.position() - to)) < 0) {
                throw new EtlFormatException(source, at + (dst.position() - to), "file ends early: truncated");
            }
        }
    }

    private void ensureRaw(int n) {
        if (raw.length < n) {
            byte[] bigger = new byte[Math.max(n, raw.length * 2)];
            System.arraycopy(raw, 0, bigger, 0, BufferHeader.SIZE);
            raw = bigger;
            rawView = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /**
     * Once {@link #next} has said the end: why the file holds less than its logger wrote ({@link LogfileHeader#cutShort}),
     * or null, also when it has no readable logfile header (which whoever decodes it reports).
     */
    public String cutShort() {
        return logfileHeader == null || position < length ? null : logfileHeader.cutShort(index + 1);
    }

    /** Goes back to the first buffer: a finished file is walked once for its lateness, then decoded. */
    public void rewind() {
        decoder.restartExpansion();
        position = 0;
        index = -1;
        bufferOffset = -1;
        header = null;
    }

    /** Index of the loaded buffer in the file, from 0. */
    public int bufferIndex() { return index; }
    public long bufferOffset() { return bufferOffset; }
    /** The loaded buffer's header (framed buffers too: {@link #framesOnly} loads no decoder). */
    public BufferHeader header() { return header; }
    /** The loaded buffer's bytes exactly as in the file; valid until the next call to next(). */
    public byte[] rawBytes() { return raw; }
    public int rawLength() { return rawLength; }
    public BufferDecoder decoder() { return decoder; }

    /** Walks the loaded buffer's events. */
    public void walk(TraceEventHandler handler) { decoder.walk(handler); }

    @Override
    public void close() throws IOException {
        if (channel != null) channel.close();
    }
}
