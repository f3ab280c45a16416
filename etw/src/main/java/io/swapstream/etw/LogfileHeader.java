package io.swapstream.etw;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * TRACE_LOGFILE_HEADER, the payload of the first event of a file (SYSTEM header, HookId 0x0000),
 * in its 64- and 32-bit layouts (docs/etw-formats.md §3).
 *
 * @param timestamp the header event's own timestamp (raw session clock): ts0 of clock conversion
 */
public record LogfileHeader(
        int bufferSize,
        int majorVersion,
        int minorVersion,
        int subVersion,
        int subMinorVersion,
        int providerVersion,
        int numberOfProcessors,
        long endTime,
        int timerResolution,
        int maximumFileSize,
        int logFileMode,
        int buffersWritten,
        int startBuffers,
        int pointerSize,
        int eventsLost,
        int cpuSpeedInMHz,
        long bootTime,
        long perfFreq,
        long startTime,
        int reservedFlags,
        int buffersLost,
        String loggerName,
        String logFileName,
        long timestamp) {

    public static final int HOOK_ID = 0x0000;

    /**
     * The session id (docs/architecture.md "Topics and records"): host, logger name and StartTime, stable for
     * one recording. The logger's name comes from the file, so its '%', ':' and '/' are escaped: two
     * recordings cannot share an id through a name, and '/' stays the separator of the keys built on it.
     * The host is the ingester's to check ({@link #hostProblem}).
     */
    public String sessionId(String host) {
        return host + ":" + escapeLogger(loggerName) + ":" + startTime;
    }

    static String escapeLogger(String name) {
        if (name.indexOf('%') < 0 && name.indexOf(':') < 0 && name.indexOf('/') < 0) return name;
        return name.replace("%", "%25").replace(":", "%3A").replace("/", "%2F");
    }

    /** Why {@code host} cannot begin a session id, or null when it can: a session id's host holds no ':', '/', '%' or control character. */
    public static String hostProblem(String host) {
        if (host == null || host.isEmpty()) return "a host name is empty";
        if (host.length() > 255) return "host name '" + host.substring(0, 40) + "...' is longer than 255 characters";
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (c == ':' || c == '/' || c == '%' || c < 0x20 || c == 0x7F) {
                return "host name '" + host.replaceAll("\\p{Cntrl}", "?") + "' holds " + (c < 0x20 || c == 0x7F ? "a control character"
                        : "'" + c + "'") + ", which session ids reserve";
            }
        }
        return null;
    }

    /**
     * What tells this recording's buffers from another's under the same session id: a hash of the fields
     * the kernel sets when the logger starts and never rewrites (not its end time or counts, which it
     * rewrites at the stop). A trace made up under another host's name and start time differs here.
     */
    public String stream() {
        java.security.MessageDigest sha;
        try {
            sha = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java platform has SHA-256
        }
        ByteBuffer b = ByteBuffer.allocate(96).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(bufferSize).putInt(majorVersion).putInt(minorVersion).putInt(subVersion).putInt(subMinorVersion).putInt(providerVersion)
                .putInt(numberOfProcessors).putInt(timerResolution).putInt(maximumFileSize).putInt(pointerSize).putInt(cpuSpeedInMHz)
                .putLong(bootTime).putLong(perfFreq).putLong(startTime).putInt(reservedFlags);
        sha.update(b.array(), 0, b.position());
        sha.update(loggerName.getBytes(StandardCharsets.UTF_8));
        return java.util.HexFormat.of().formatHex(sha.digest(), 0, 8);
    }

    /** The host part of a session id (the text before its first ':'). */
    public static String hostOf(String sessionId) {
        int c = sessionId.indexOf(':');
        return c < 0 ? sessionId : sessionId.substring(0, c);
    }

    /** The logfile header in the buffer {@code decoder} holds (a file's first), or null when it has none. */
    public static LogfileHeader find(BufferDecoder decoder) {
        LogfileHeader[] found = new LogfileHeader[1];
        decoder.walk(ev -> {
            if (found[0] == null && isHeaderEvent(ev)) found[0] = parse(ev, decoder);
        });
        return found[0];
    }

    /**
     * Why a finished file of {@code buffersInFile} buffers (the header's own counted) holds less than its logger wrote, or
     * null: a logger that stops rewrites this header with its EndTime and the buffers it wrote, so an EndTime of 0 says it
     * never stopped (it crashed, or the file was taken while it ran), and more buffers written than the file holds say the
     * file was cut, perhaps at a buffer's end, where nothing else shows it. A circular file overwrites its own buffers and a
     * real-time or buffering session writes none, so neither count says anything there.
     */
    public String cutShort(long buffersInFile) {
        if ((logFileMode & (LogFileMode.FILE_MODE_CIRCULAR | LogFileMode.REAL_TIME_MODE | LogFileMode.BUFFERING_MODE)) != 0) return null;
        if (endTime == 0) {
            return "its logfile header has no EndTime: its logger never stopped (it crashed, or the file was taken while it"
                    + " ran), so the buffers it held were never written: cut short";
        }
        long written = Integer.toUnsignedLong(buffersWritten);
        if (written > buffersInFile) {
            return "its logfile header says " + written + " buffers were written; the file holds " + buffersInFile + ": cut short";
        }
        return null;
    }

    /** OS build number: ProviderVersion's low 16 bits. */
    public int build() { return providerVersion & 0xFFFF; }

    /** The session clock type (ReservedFlags holds it, docs/etw-formats.md §3). */
    public int clockType() { return reservedFlags; }

    /** True when {@code ev} is a logfile-header event. */
    public static boolean isHeaderEvent(TraceEvent ev) {
        return ev.headerType().isSystem() && ev.hookId() == HOOK_ID;
    }

    /** Parses the header event {@code ev}; errors name {@code decoder}'s file offsets. */
    public static LogfileHeader parse(TraceEvent ev, BufferDecoder decoder) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        int len = ev.payloadLength();
        boolean wide = ev.pointerSize() == 8;
        int fixed = wide ? 0x118 : 0x110;
        if (len < fixed) {
            throw decoder.error(ev.offset(), "logfile header payload of " + len + " bytes is shorter than "
                    + fixed + " (TRACE_LOGFILE_HEADER " + (wide ? 64 : 32) + "-bit)");
        }
        // LoggerName and LogFileName are pointer-sized, so every field after them moves by 8 in 32-bit.
        int shift = wide ? 0 : -8;
        int end = p + len;
        int nameStart = p + fixed;
        int nameEnd = utf16End(d, nameStart, end);
        String loggerName = utf16(d, nameStart, nameEnd);
        int fileStart = Math.min(nameEnd + 2, end);
        String logFileName = utf16(d, fileStart, utf16End(d, fileStart, end));
        return new LogfileHeader(
                d.getInt(p),
                d.get(p + 4) & 0xFF, d.get(p + 5) & 0xFF, d.get(p + 6) & 0xFF, d.get(p + 7) & 0xFF,
                d.getInt(p + 8),
                d.getInt(p + 0x0C),
                d.getLong(p + 0x10),
                d.getInt(p + 0x18),
                d.getInt(p + 0x1C),
                d.getInt(p + 0x20),
                d.getInt(p + 0x24),
                d.getInt(p + 0x28),
                d.getInt(p + 0x2C),
                d.getInt(p + 0x30),
                d.getInt(p + 0x34),
                d.getLong(p + 0xF8 + shift),
                d.getLong(p + 0x100 + shift),
                d.getLong(p + 0x108 + shift),
                d.getInt(p + 0x110 + shift),
                d.getInt(p + 0x114 + shift),
                loggerName,
                logFileName,
                ev.timestamp());
    }

    /** Offset, within the header event's payload, of ReservedFlags (the clock type). */
    public static int clockTypeOffset(int pointerSize) {
        return pointerSize == 8 ? 0x110 : 0x108;
    }

    private static int utf16End(ByteBuffer d, int from, int end) {
        int q = from;
        while (q + 1 < end && d.getShort(q) != 0) q += 2;
        return Math.min(q, end);
    }

    private static String utf16(ByteBuffer d, int from, int to) {
        if (to <= from) return "";
        byte[] b = new byte[to - from];
        d.get(from, b);
        return new String(b, StandardCharsets.UTF_16LE);
    }
}
