package io.swapstream.decode.event;

import io.swapstream.etw.TraceEvent;
import java.nio.ByteBuffer;

/**
 * Thread Start/End/DCStart/DCEnd (0x0501-0x0504), Thread_V2..V4 TypeGroup1: ProcessId, ThreadId,
 * seven pointers (stacks, start addresses, TEB), SubProcessTag, then (v3+) BasePriority; and the
 * thread name event 0x0548 (ProcessId, ThreadId, UTF-16 name).
 *
 * @param basePriority -1 when the version carries none
 * @param threadName   only for 0x0548, else null
 */
public record ThreadEvent(int hookId, long timestamp, int processId, int threadId, int basePriority,
                          String threadName) implements LabelEvent {

    public static final int START = 0x0501;
    public static final int END = 0x0502;
    public static final int DC_START = 0x0503;
    public static final int DC_END = 0x0504;
    public static final int SET_NAME = 0x0548;

    public static boolean handles(int hookId) {
        return (hookId >= START && hookId <= DC_END) || hookId == SET_NAME;
    }

    /** Thread End: the thread exits. DCEnd is rundown at session end, of a thread that still lives. */
    public boolean isEnd() { return hookId == END; }
    public boolean isName() { return hookId == SET_NAME; }

    public static ThreadEvent decode(TraceEvent ev) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        int len = ev.payloadLength();
        if (len < 8) throw new MalformedEventException("Thread event payload of " + len + " bytes is shorter than 8");
        int pid = d.getInt(p);
        int tid = d.getInt(p + 4);
        if (ev.hookId() == SET_NAME) {
            int end = p + len;
            int q = p + 8;
            int nameEnd = q;
            while (nameEnd + 1 < end && d.getShort(nameEnd) != 0) nameEnd += 2;
            return new ThreadEvent(SET_NAME, ev.timestamp(), pid, tid, -1, ProcessEvent.utf16(d, q, nameEnd));
        }
        int priority = -1;
        int at = 8 + 7 * ev.pointerSize() + 4;
        if (ev.version() >= 3 && len > at) priority = d.get(p + at);
        return new ThreadEvent(ev.hookId(), ev.timestamp(), pid, tid, priority, null);
    }
}
