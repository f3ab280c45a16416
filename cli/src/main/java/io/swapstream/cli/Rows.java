package io.swapstream.cli;

import io.swapstream.decode.AvroRecords;
import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.schemas.serde.AvroJson;
import java.util.List;
import java.util.function.Function;

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

    /** Field values of a row by field name, in {@link ContextSwitch#FIELDS} order. */
    private static final List<Function<ContextSwitch, Object>> FIELD_VALUES = List.of(ContextSwitch::session,
            ContextSwitch::host, ContextSwitch::cpu, ContextSwitch::timestamp, ContextSwitch::timeNanos, ContextSwitch::source,
            ContextSwitch::oldThreadId, ContextSwitch::oldThreadPriority, ContextSwitch::oldThreadState,
            ContextSwitch::oldThreadWaitReason, ContextSwitch::oldThreadWaitMode, ContextSwitch::newThreadId,
            ContextSwitch::newThreadPriority, ContextSwitch::newThreadWaitTicks, ContextSwitch::pmcCounters,
            ContextSwitch::newThreadTimeSinceLastNanos, ContextSwitch::oldThreadRunNanos, ContextSwitch::newThreadReadyNanos,
            ContextSwitch::newThreadWaitsNanos, ContextSwitch::readyingThreadId, ContextSwitch::readyingProcessId);

    /**
     * A batch decoded as docs/reading-the-topics.md gives it: session, host, count, one array per ContextSwitch field
     * (nulls where a row has none), and the thread records.
     */
    @SuppressWarnings("unchecked")
    static void columns(StringBuilder b, SwitchBatch batch) {
        List<ContextSwitch> rows = batch.rows();
        b.append("{\"session\":");
        str(b, batch.session());
        b.append(",\"host\":");
        str(b, batch.host());
        b.append(",\"count\":").append(batch.count());
        for (int f = 2; f < ContextSwitch.FIELDS.size(); f++) {
            b.append(",\"").append(ContextSwitch.FIELDS.get(f)).append("\":[");
            for (int i = 0; i < rows.size(); i++) {
                if (i > 0) b.append(',');
                Object v = FIELD_VALUES.get(f).apply(rows.get(i));
                if (v instanceof String s) str(b, s);
                else if (v instanceof List<?> l) list(b, (List<Long>) l, ',', "[", "]");
                else b.append(v);
            }
            b.append(']');
        }
        b.append(",\"threads\":[");
        List<io.swapstream.schemas.avro.ThreadInfo> threads = batch.threads().stream().map(AvroRecords::of).toList();
        for (int i = 0; i < threads.size(); i++) {
            if (i > 0) b.append(',');
            AvroJson.write(b, threads.get(i), io.swapstream.schemas.avro.ThreadInfo.getClassSchema());
        }
        b.append("]}");
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
