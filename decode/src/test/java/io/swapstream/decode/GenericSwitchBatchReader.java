package io.swapstream.decode;

import io.swapstream.batch.SwitchRow;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;

/**
 * docs/reading-the-topics.md's Java decoder of a {@code ContextSwitchBatch}, word for word: the
 * record as Avro's generic reader gives it, back to one array per SwitchRow field. Written from
 * the schema's docs, apart from the serde, so that the two check each other.
 */
final class GenericSwitchBatchReader {
    private GenericSwitchBatchReader() {}

    /** Field name → its column (row i is switch i); enums as their symbols, null where a row has none. */
    static Map<String, Object[]> columns(GenericRecord b) {
        int n = (Integer) b.get("count");
        Map<String, Object[]> c = new LinkedHashMap<>();
        List<Integer> cpu = list(b.get("cpu"));
        List<Long> deltas = list(b.get("timestampDeltas"));
        Object[] ts = new Object[n];
        Object[] nanos = new Object[n];
        long baseTs = (Long) b.get("clockBaseTimestamp"), baseNanos = (Long) b.get("clockBaseNanos");
        long f = (Long) b.get("clockTicksPerSecond");
        for (int i = 0; i < n; i++) {
            ts[i] = (i == 0 ? 0 : (Long) ts[i - 1]) + deltas.get(i);
            long d = (Long) ts[i] - baseTs;   // floor(d * 1e9 / f) without overflow
            nanos[i] = baseNanos + Math.floorDiv(d, f) * 1_000_000_000L + Math.floorMod(d, f) * 1_000_000_000L / f;
        }
        exceptions(nanos, b.get("timeNanosExceptions"));
        Object[] source = new Object[n];
        GenericRecord runs = (GenericRecord) b.get("sourceRuns");
        List<Object> runValues = list(runs.get("values"));
        List<Integer> runLengths = list(runs.get("lengths"));
        for (int k = 0, i = 0; k < runLengths.size(); k++) {
            for (int j = 0; j < runLengths.get(k); j++) source[i++] = runValues.get(k).toString();
        }
        List<Integer> ids = list(b.get("threadIds"));
        Object[] old = new Object[n];
        List<Integer> oldIndexes = list(b.get("oldThreadIdIndexes"));
        for (int i = 0; i < n; i++) old[i] = ids.get(oldIndexes.get(i));
        Object[] newTid = lookUp(sparse(b.get("newThreadIdIndexes"), n), ids);
        // derived: the row's time minus that of the new thread's latest switch-out in this batch
        Object[] since = new Object[n];
        Map<Object, Long> lastOut = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            Long out = lastOut.get(newTid[i]);
            if (newTid[i] != null && !newTid[i].equals(0) && out != null) since[i] = (Long) nanos[i] - out;
            lastOut.put(old[i], (Long) nanos[i]);
        }
        exceptions(since, b.get("newThreadTimeSinceLastNanosExceptions"));
        // derived: the row's time minus that of the processor's row before
        Object[] run = new Object[n];
        Map<Integer, Long> lastOnCpu = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            Long before = lastOnCpu.put(cpu.get(i), (Long) nanos[i]);
            if (!old[i].equals(0) && before != null) run[i] = (Long) nanos[i] - before;
        }
        exceptions(run, b.get("oldThreadRunNanosExceptions"));
        Object[] ready = sparse(b.get("newThreadReadyNanos"), n);
        // derived: time since last minus ready time
        Object[] waits = new Object[n];
        for (int i = 0; i < n; i++) if (since[i] != null && ready[i] != null) waits[i] = (Long) since[i] - (Long) ready[i];
        exceptions(waits, b.get("newThreadWaitsNanosExceptions"));

        c.put("cpu", cpu.toArray());
        c.put("timestamp", ts);
        c.put("timeNanos", nanos);
        c.put("source", source);
        c.put("oldThreadId", old);
        c.put("oldThreadPriority", sparse(b.get("oldThreadPriority"), n));
        c.put("oldThreadState", symbols(sparse(b.get("oldThreadState"), n)));
        c.put("oldThreadWaitReason", symbols(sparse(b.get("oldThreadWaitReason"), n)));
        c.put("oldThreadWaitMode", symbols(sparse(b.get("oldThreadWaitMode"), n)));
        c.put("newThreadId", newTid);
        c.put("newThreadPriority", sparse(b.get("newThreadPriority"), n));
        c.put("newThreadWaitTicks", sparse(b.get("newThreadWaitTicks"), n));
        c.put("pmcCounters", sparse(b.get("pmcCounters"), n));
        c.put("newThreadTimeSinceLastNanos", since);
        c.put("oldThreadRunNanos", run);
        c.put("newThreadReadyNanos", ready);
        c.put("newThreadWaitsNanos", waits);
        c.put("readyingThreadId", lookUp(sparse(b.get("readyingThreadIdIndexes"), n), ids));
        c.put("readyingProcessId", sparse(b.get("readyingProcessId"), n));
        c.put("previousCState", sparse(b.get("previousCState"), n));
        c.put("oldThreadRank", sparse(b.get("oldThreadRank"), n));
        c.put("newThreadPriorityDecrement", sparse(b.get("newThreadPriorityDecrement"), n));
        c.put("oldThreadIdealProcessor", sparse(b.get("oldThreadIdealProcessor"), n));
        c.put("oldThreadRemainingQuantum", sparse(b.get("oldThreadRemainingQuantum"), n));
        return c;
    }

    /** A column with nulls: bit i%8 of byte i/8 of present marks row i; values holds those rows' values. */
    static Object[] sparse(Object column, int n) {
        ByteBuffer present = (ByteBuffer) ((GenericRecord) column).get("present");
        List<Object> values = list(((GenericRecord) column).get("values"));
        Object[] out = new Object[n];
        for (int i = 0, k = 0; i < n; i++) {
            if (present.remaining() > 0 && (present.get(present.position() + (i >> 3)) >> (i & 7) & 1) != 0) out[i] = values.get(k++);
        }
        return out;
    }

    /** A derived column's rows that differ from its rule. */
    static void exceptions(Object[] column, Object exceptions) {
        List<Integer> rows = list(((GenericRecord) exceptions).get("rows"));
        List<Object> values = list(((GenericRecord) exceptions).get("values"));
        for (int k = 0; k < rows.size(); k++) column[rows.get(k)] = values.get(k);
    }

    static Object[] lookUp(Object[] indexes, List<Integer> ids) {
        Object[] out = new Object[indexes.length];
        for (int i = 0; i < out.length; i++) out[i] = indexes[i] == null ? null : ids.get((Integer) indexes[i]);
        return out;
    }

    static Object[] symbols(Object[] column) {
        Object[] out = new Object[column.length];
        for (int i = 0; i < out.length; i++) out[i] = column[i] == null ? null : column[i].toString();
        return out;
    }

    @SuppressWarnings("unchecked")
    static <T> List<T> list(Object array) {
        return new ArrayList<>((List<T>) array);
    }
}
