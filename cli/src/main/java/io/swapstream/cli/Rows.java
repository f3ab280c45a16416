package io.swapstream.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.swapstream.decode.AvroRecords;
import io.swapstream.decode.ContextSwitch;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.util.List;
import java.util.function.Function;

/**
 * ContextSwitch rows as JSON (through a streaming generator: the switches command writes millions of
 * rows, and mapping each to a tree first triples its run time) and as CSV.
 */
final class Rows {
    private Rows() {}

    /** One row as a JSON object, the fields in the schema's order. */
    static void json(JsonGenerator g, ContextSwitch s) throws IOException {
        g.writeStartObject();
        g.writeStringField("session", s.session());
        g.writeStringField("host", s.host());
        g.writeNumberField("cpu", s.cpu());
        g.writeNumberField("timestamp", s.timestamp());
        g.writeNumberField("timeNanos", s.timeNanos());
        g.writeStringField("source", s.source());
        g.writeNumberField("oldThreadId", s.oldThreadId());
        g.writeFieldName("oldThreadPriority");
        RecordJson.number(g, s.oldThreadPriority());
        g.writeStringField("oldThreadState", s.oldThreadState());
        g.writeStringField("oldThreadWaitReason", s.oldThreadWaitReason());
        g.writeStringField("oldThreadWaitMode", s.oldThreadWaitMode());
        g.writeFieldName("newThreadId");
        RecordJson.number(g, s.newThreadId());
        g.writeFieldName("newThreadPriority");
        RecordJson.number(g, s.newThreadPriority());
        g.writeFieldName("newThreadWaitTicks");
        RecordJson.number(g, s.newThreadWaitTicks());
        g.writeFieldName("pmcCounters");
        longs(g, s.pmcCounters());
        g.writeFieldName("newThreadTimeSinceLastNanos");
        RecordJson.number(g, s.newThreadTimeSinceLastNanos());
        g.writeFieldName("oldThreadRunNanos");
        RecordJson.number(g, s.oldThreadRunNanos());
        g.writeFieldName("newThreadReadyNanos");
        RecordJson.number(g, s.newThreadReadyNanos());
        g.writeFieldName("newThreadWaitsNanos");
        RecordJson.number(g, s.newThreadWaitsNanos());
        g.writeFieldName("readyingThreadId");
        RecordJson.number(g, s.readyingThreadId());
        g.writeFieldName("readyingProcessId");
        RecordJson.number(g, s.readyingProcessId());
        g.writeFieldName("previousCState");
        RecordJson.number(g, s.previousCState());
        g.writeFieldName("oldThreadRank");
        RecordJson.number(g, s.oldThreadRank());
        g.writeFieldName("newThreadPriorityDecrement");
        RecordJson.number(g, s.newThreadPriorityDecrement());
        g.writeFieldName("oldThreadIdealProcessor");
        RecordJson.number(g, s.oldThreadIdealProcessor());
        g.writeFieldName("oldThreadRemainingQuantum");
        RecordJson.number(g, s.oldThreadRemainingQuantum());
        g.writeEndObject();
    }

    /** Field values of a row by field name, in {@link ContextSwitch#FIELDS} order. */
    private static final List<Function<ContextSwitch, Object>> FIELD_VALUES = List.of(ContextSwitch::session,
            ContextSwitch::host, ContextSwitch::cpu, ContextSwitch::timestamp, ContextSwitch::timeNanos, ContextSwitch::source,
            ContextSwitch::oldThreadId, ContextSwitch::oldThreadPriority, ContextSwitch::oldThreadState,
            ContextSwitch::oldThreadWaitReason, ContextSwitch::oldThreadWaitMode, ContextSwitch::newThreadId,
            ContextSwitch::newThreadPriority, ContextSwitch::newThreadWaitTicks, ContextSwitch::pmcCounters,
            ContextSwitch::newThreadTimeSinceLastNanos, ContextSwitch::oldThreadRunNanos, ContextSwitch::newThreadReadyNanos,
            ContextSwitch::newThreadWaitsNanos, ContextSwitch::readyingThreadId, ContextSwitch::readyingProcessId,
            ContextSwitch::previousCState, ContextSwitch::oldThreadRank, ContextSwitch::newThreadPriorityDecrement,
            ContextSwitch::oldThreadIdealProcessor, ContextSwitch::oldThreadRemainingQuantum);

    /**
     * A batch decoded as docs/reading-the-topics.md gives it: session, host, count, one array per ContextSwitch field
     * (nulls where a row has none), and the thread records.
     */
    @SuppressWarnings("unchecked")
    static void columns(JsonGenerator g, SwitchBatch batch) throws IOException {
        List<ContextSwitch> rows = batch.rows();
        g.writeStartObject();
        g.writeStringField("session", batch.session());
        g.writeStringField("host", batch.host());
        g.writeNumberField("count", batch.count());
        for (int f = 2; f < ContextSwitch.FIELDS.size(); f++) {
            g.writeArrayFieldStart(ContextSwitch.FIELDS.get(f));
            for (ContextSwitch row : rows) {
                Object v = FIELD_VALUES.get(f).apply(row);
                if (v == null) g.writeNull();
                else if (v instanceof String s) g.writeString(s);
                else if (v instanceof List<?> l) longs(g, (List<Long>) l);
                else g.writeNumber(((Number) v).longValue());
            }
            g.writeEndArray();
        }
        g.writeArrayFieldStart("threads");
        for (io.swapstream.decode.ThreadInfo t : batch.threads()) {
            var a = AvroRecords.of(t);
            RecordJson.write(g, a, a.getSchema());
        }
        g.writeEndArray();
        g.writeEndObject();
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
        if (s.pmcCounters() != null) csvList(b, s.pmcCounters());
        b.append(',');
        opt(b, s.newThreadTimeSinceLastNanos()).append(',');
        opt(b, s.oldThreadRunNanos()).append(',');
        opt(b, s.newThreadReadyNanos()).append(',');
        opt(b, s.newThreadWaitsNanos()).append(',');
        opt(b, s.readyingThreadId()).append(',');
        opt(b, s.readyingProcessId());
        opt(b.append(','), s.previousCState());
        opt(b.append(','), s.oldThreadRank());
        opt(b.append(','), s.newThreadPriorityDecrement());
        opt(b.append(','), s.oldThreadIdealProcessor());
        opt(b.append(','), s.oldThreadRemainingQuantum());
    }

    private static StringBuilder opt(StringBuilder b, Object v) {
        return v == null ? b : b.append(v);
    }

    private static void longs(JsonGenerator g, List<Long> v) throws IOException {
        if (v == null) {
            g.writeNull();
            return;
        }
        g.writeStartArray();
        for (Long x : v) g.writeNumber(x);
        g.writeEndArray();
    }

    private static void csvList(StringBuilder b, List<Long> v) {
        for (int i = 0; i < v.size(); i++) {
            if (i > 0) b.append(';');
            b.append(v.get(i));
        }
    }

    private static StringBuilder csvStr(StringBuilder b, String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0) return b.append(s);
        return b.append('"').append(s.replace("\"", "\"\"")).append('"');
    }
}
