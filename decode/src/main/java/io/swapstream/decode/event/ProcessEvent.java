package io.swapstream.decode.event;

import io.swapstream.etw.TraceEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Process Start/End/DCStart/DCEnd (HookIds 0x0301-0x0304), Process_V2..V4 TypeGroup1
 * (docs/etw-formats.md §7): UniqueProcessKey, ProcessId, ParentId, SessionId, ExitStatus,
 * DirectoryTableBase (v3+), Flags (v4+), UserSID, ANSI image name, UTF-16 command line.
 */
public record ProcessEvent(int hookId, long timestamp, int processId, int parentId, int sessionId, int exitStatus,
                           String imageFileName, String commandLine) implements LabelEvent {

    public static final int START = 0x0301;
    public static final int END = 0x0302;
    public static final int DC_START = 0x0303;
    public static final int DC_END = 0x0304;

    public static boolean handles(int hookId) {
        return hookId >= START && hookId <= DC_END;
    }

    public boolean isEnd() { return hookId == END || hookId == DC_END; }

    public static ProcessEvent decode(TraceEvent ev) {
        ByteBuffer d = ev.data();
        int ptr = ev.pointerSize();
        int p = ev.payloadOffset();
        int end = p + ev.payloadLength();
        int version = ev.version();
        if (version < 2) throw new MalformedEventException("Process event version " + version + " is not supported");
        int q = p + ptr;
        need(q + 16, end, "process ids");
        int pid = d.getInt(q);
        int parent = d.getInt(q + 4);
        int session = d.getInt(q + 8);
        int exit = d.getInt(q + 12);
        q += 16;
        if (version >= 3) q += ptr;
        if (version >= 4) q += 4;
        q = skipSid(d, q, end, ptr);
        int nameEnd = q;
        while (nameEnd < end && d.get(nameEnd) != 0) nameEnd++;
        String image = ascii(d, q, nameEnd);
        q = Math.min(nameEnd + 1, end);
        int cmdEnd = q;
        while (cmdEnd + 1 < end && d.getShort(cmdEnd) != 0) cmdEnd += 2;
        String cmd = utf16(d, q, Math.min(cmdEnd, end));
        return new ProcessEvent(ev.hookId(), ev.timestamp(), pid, parent, session, exit, image, cmd);
    }

    /** A SID preceded by TOKEN_USER (two pointers), or a 4-byte 0 when there is none. */
    private static int skipSid(ByteBuffer d, int q, int end, int ptr) {
        need(q + 4, end, "user SID");
        if (d.getInt(q) == 0) return q + 4;
        q += 2 * ptr;
        need(q + 8, end, "user SID");
        int authorities = d.get(q + 1) & 0xFF;
        q += 8 + 4 * authorities;
        need(q, end, "user SID");
        return q;
    }

    private static void need(int q, int end, String what) {
        if (q > end) throw new MalformedEventException("Process event too short for its " + what);
    }

    static String ascii(ByteBuffer d, int from, int to) {
        byte[] b = new byte[Math.max(0, to - from)];
        d.get(from, b);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    static String utf16(ByteBuffer d, int from, int to) {
        byte[] b = new byte[Math.max(0, to - from)];
        d.get(from, b);
        return new String(b, StandardCharsets.UTF_16LE);
    }
}
