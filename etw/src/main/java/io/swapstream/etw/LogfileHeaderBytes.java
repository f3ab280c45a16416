package io.swapstream.etw;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The logfile header where it lies in a file's uncompressed first buffer, to be rewritten in place as its logger
 * does: at its start (no EndTime, one buffer written) and when it stops (the EndTime, the buffers written, the losses).
 * Offsets as {@link LogfileHeader#parse} reads them (docs/etw-formats.md §3).
 */
public final class LogfileHeaderBytes {
    private final ByteBuffer bytes;
    private final int payload;
    private final int pointerSize;
    private final LogfileHeader header;

    private LogfileHeaderBytes(byte[] bytes, int payload, int pointerSize, LogfileHeader header) {
        this.bytes = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        this.payload = payload;
        this.pointerSize = pointerSize;
        this.header = header;
    }

    /** The header in the uncompressed buffer {@code bytes} (errors name {@code name}), or null when it has none. */
    public static LogfileHeaderBytes locate(String name, byte[] bytes) {
        BufferDecoder d = new BufferDecoder();
        d.load(name, 0, bytes, 0, bytes.length);
        LogfileHeaderBytes[] found = new LogfileHeaderBytes[1];
        // an uncompressed buffer's events lie in it as in the file: the payload's offset is the same in the bytes
        d.walk(ev -> {
            if (found[0] == null && LogfileHeader.isHeaderEvent(ev)) {
                found[0] = new LogfileHeaderBytes(bytes, ev.payloadOffset(), ev.pointerSize(), LogfileHeader.parse(ev, d));
            }
        });
        return found[0];
    }

    /** The header as it was found. */
    public LogfileHeader header() {
        return header;
    }

    /** EndTime, a FILETIME; 0 while the logger runs. */
    public LogfileHeaderBytes endTime(long fileTime) {
        bytes.putLong(payload + 0x10, fileTime);
        return this;
    }

    public LogfileHeaderBytes buffersWritten(int count) {
        bytes.putInt(payload + 0x24, count);
        return this;
    }

    public LogfileHeaderBytes eventsLost(int count) {
        bytes.putInt(payload + 0x30, count);
        return this;
    }

    public LogfileHeaderBytes buffersLost(int count) {
        // after LoggerName and LogFileName, two pointers
        bytes.putInt(payload + (pointerSize == 8 ? 0x114 : 0x10C), count);
        return this;
    }
}
