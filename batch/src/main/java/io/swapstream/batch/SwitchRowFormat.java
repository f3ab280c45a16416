package io.swapstream.batch;

import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.util.List;
import java.util.function.Function;
import com.fasterxml.jackson.core.JsonGenerator;

/**
 * SwitchRow rows as JSON (through a streaming generator: the switches command writes millions of
 * rows, and mapping each to a tree first triples its run time) and as CSV.
 */
public final class SwitchRowFormat {
    private SwitchRowFormat() {}

    /** One row as a JSON object, the fields in the schema's order. */
    public static void json(JsonGenerator g, SwitchRow s) throws IOException {
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

    /** Field values of a row by field name, in {@link SwitchRow#FIELDS} order. */
    private static final List<Function<SwitchRow, Object>> FIELD_VALUES = List.of(SwitchRow::session,
            SwitchRow::host, SwitchRow::cpu, SwitchRow::timestamp, SwitchRow::timeNanos, SwitchRow::source,
            SwitchRow::oldThreadId, SwitchRow::oldThreadPriority, SwitchRow::oldThreadState,
            SwitchRow::oldThreadWaitReason, SwitchRow::oldThreadWaitMode, SwitchRow::newThreadId,
            SwitchRow::newThreadPriority, SwitchRow::newThreadWaitTicks, SwitchRow::pmcCounters,
            SwitchRow::newThreadTimeSinceLastNanos, SwitchRow::oldThreadRunNanos, SwitchRow::newThreadReadyNanos,
            SwitchRow::newThreadWaitsNanos, SwitchRow::readyingThreadId, SwitchRow::readyingProcessId,
            SwitchRow::previousCState, SwitchRow::oldThreadRank, SwitchRow::newThreadPriorityDecrement,
            SwitchRow::oldThreadIdealProcessor, SwitchRow::oldThreadRemainingQuantum);

    /**
     * A batch decoded as docs/reading-the-topics.md gives it: session, host, count, one array per SwitchRow field
     * (nulls where a row has none), and the thread records.
     */
    @SuppressWarnings("unchecked")
    public static void columns(JsonGenerator g, SwitchBatch batch) throws IOException {
        List<SwitchRow> rows = batch.rows();
        g.writeStartObject();
        g.writeStringField("session", batch.session());
        g.writeStringField("host", batch.host());
        g.writeNumberField("count", batch.count());
        for (int f = 2; f < SwitchRow.FIELDS.size(); f++) {
            g.writeArrayFieldStart(SwitchRow.FIELDS.get(f));
            for (SwitchRow row : rows) {
                Object v = FIELD_VALUES.get(f).apply(row);
                if (v == null) g.writeNull();
                else if (v instanceof String s) g.writeString(s);
                else if (v instanceof List<?> l) longs(g, (List<Long>) l);
                else g.writeNumber(((Number) v).longValue());
            }
            g.writeEndArray();
        }
        g.writeArrayFieldStart("threads");
        for (io.swapstream.batch.ThreadLabel t : batch.threads()) {
            var a = AvroRecords.of(t);
            RecordJson.write(g, a, a.getSchema());
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    public static void csv(StringBuilder b, SwitchRow s) {
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
