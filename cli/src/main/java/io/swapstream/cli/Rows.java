package io.swapstream.cli;

import io.swapstream.decode.ContextSwitch;
import java.util.List;

/**
 * ContextSwitch rows as JSON lines and CSV, written by hand into a reused builder: the switches
 * command writes millions of rows and a general JSON mapper triples its run time.
 */
final class Rows {
    private Rows() {}

    static void json(StringBuilder b, ContextSwitch s) {
        b.append("{\"session\":");
        str(b, s.session());
        b.append(",\"host\":");
        str(b, s.host());
        b.append(",\"cpu\":").append(s.cpu());
        b.append(",\"timestamp\":").append(s.timestamp());
        b.append(",\"timeNanos\":").append(s.timeNanos());
        b.append(",\"source\":\"").append(s.source()).append('"');
        b.append(",\"oldThreadId\":").append(s.oldThreadId());
        b.append(",\"oldThreadPriority\":").append(s.oldThreadPriority());
        b.append(",\"oldThreadState\":");
        str(b, s.oldThreadState());
        b.append(",\"oldThreadWaitReason\":");
        str(b, s.oldThreadWaitReason());
        b.append(",\"oldThreadWaitMode\":");
        str(b, s.oldThreadWaitMode());
        b.append(",\"newThreadId\":").append(s.newThreadId());
        b.append(",\"newThreadPriority\":").append(s.newThreadPriority());
        b.append(",\"newThreadWaitTicks\":").append(s.newThreadWaitTicks());
        b.append(",\"pmcCounters\":");
        list(b, s.pmcCounters(), ',', "[", "]");
        b.append(",\"newThreadTimeSinceLastNanos\":").append(s.newThreadTimeSinceLastNanos());
        b.append(",\"oldThreadRunNanos\":").append(s.oldThreadRunNanos());
        b.append(",\"newThreadReadyNanos\":").append(s.newThreadReadyNanos());
        b.append(",\"newThreadWaitsNanos\":").append(s.newThreadWaitsNanos());
        b.append(",\"readyingThreadId\":").append(s.readyingThreadId());
        b.append(",\"readyingProcessId\":").append(s.readyingProcessId());
        b.append('}');
    }

    static void csv(StringBuilder b, ContextSwitch s) {
        csvStr(b, s.session()).append(',');
        csvStr(b, s.host()).append(',');
        b.append(s.cpu()).append(',').append(s.timestamp()).append(',').append(s.timeNanos()).append(',');
        b.append(s.source()).append(',').append(s.oldThreadId()).append(',');
        opt(b, s.oldThreadPriority()).append(',');
        opt(b, s.oldThreadState()).append(',');
        opt(b, s.oldThreadWaitReason()).append(',');
        opt(b, s.oldThreadWaitMode()).append(',');
        opt(b, s.newThreadId()).append(',');
        opt(b, s.newThreadPriority()).append(',');
        opt(b, s.newThreadWaitTicks()).append(',');
        if (s.pmcCounters() != null) list(b, s.pmcCounters(), ';', "", "");
        b.append(',');
        opt(b, s.newThreadTimeSinceLastNanos()).append(',');
        opt(b, s.oldThreadRunNanos()).append(',');
        opt(b, s.newThreadReadyNanos()).append(',');
        opt(b, s.newThreadWaitsNanos()).append(',');
        opt(b, s.readyingThreadId()).append(',');
        opt(b, s.readyingProcessId());
    }

    private static StringBuilder opt(StringBuilder b, Object v) {
        return v == null ? b : b.append(v);
    }

    private static void list(StringBuilder b, List<Long> v, char sep, String open, String close) {
        if (v == null) {
            b.append("null");
            return;
        }
        b.append(open);
        for (int i = 0; i < v.size(); i++) {
            if (i > 0) b.append(sep);
            b.append(v.get(i));
        }
        b.append(close);
    }

    private static StringBuilder csvStr(StringBuilder b, String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0) return b.append(s);
        return b.append('"').append(s.replace("\"", "\"\"")).append('"');
    }

    static void str(StringBuilder b, String s) {
        if (s == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        b.append('"');
    }
}
