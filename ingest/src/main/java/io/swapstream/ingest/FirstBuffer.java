package io.swapstream.ingest;

import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.FileBytes;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * What a watched file's first buffer says: not all there yet (both null), not a trace ({@code notEtl}
 * why), or its session from the logfile header.
 */
record FirstBuffer(String notEtl, String session, String logger, long startTime, String stream) {
    private static final FirstBuffer NOT_YET = new FirstBuffer(null, null, null, 0, null);

    /** @param header a scratch array of {@link BufferHeader#SIZE} bytes */
    static FirstBuffer read(Path path, String host, FileChannel ch, long size, byte[] header) throws IOException {
        if (size < BufferHeader.SIZE) {
            // a logger writes whole buffers: bytes that cannot start one say it is not a trace, however short
            if (size >= 4) {
                ByteBuffer first = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
                FileBytes.readFully(ch, first, 0);
                int bufferSize = first.getInt(0);
                if (bufferSize != 0 && (bufferSize < BufferHeader.SIZE || bufferSize > SwapstreamConfig.MAX_MESSAGE_BYTES)) {
                    return new FirstBuffer("its first bytes are not a buffer header: not an ETL file", null, null, 0, null);
                }
            }
            return NOT_YET;
        }
        FileBytes.readFully(ch, ByteBuffer.wrap(header), 0);
        int first = BufferHeader.read(header, 0).bufferSize();
        if (first == 0 || (first >= BufferHeader.SIZE && first <= SwapstreamConfig.MAX_MESSAGE_BYTES && size < first)) return NOT_YET;
        try {
            byte[] bytes = new byte[(int) Math.min(size, Math.max(first, BufferHeader.SIZE))];
            FileBytes.readFully(ch, ByteBuffer.wrap(bytes), 0);
            EtlReader r = EtlReader.of(path.toString(), ByteBuffer.wrap(bytes)).framesOnly();
            if (!r.next()) return NOT_YET;
            LogfileHeader h = LogfileHeader.find(r.decoder());
            if (h == null) throw new EtlFormatException(path.toString(), BufferHeader.SIZE, "no logfile header event in the first buffer");
            return new FirstBuffer(null, h.sessionId(host), h.loggerName(), h.startTime(), h.stream());
        } catch (EtlFormatException e) {
            return new FirstBuffer(e.getMessage(), null, null, 0, null);
        }
    }

    /**
     * Why the finished file {@code path}, all {@code buffers} of whose buffers are out, holds less than its logger wrote, or
     * null. Its first buffer is read again: a logger that stops rewrites it, after the ingester published it as it was at
     * the start.
     */
    static String cutShort(Path path, long buffers) {
        try (EtlReader r = EtlReader.open(path).framesOnly()) {
            if (!r.next()) return null;
            LogfileHeader h = LogfileHeader.find(r.decoder());
            return h == null ? null : h.cutShort(buffers);
        } catch (IOException | EtlFormatException e) {
            return null; // gone or rewritten since: its end is reported as that
        }
    }
}
