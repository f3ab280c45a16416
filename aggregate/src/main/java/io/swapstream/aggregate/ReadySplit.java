package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.specific.SpecificRecordBase;

/**
 * Ready time split by what the processor was doing (docs/architecture.md "Ready time split"): a
 * switch-in from the idle thread woke a processor, and its ready time is mostly that processor's way
 * out of its C-state; any other switch-in waited for a busy processor (contention). Idle wake-ups are
 * also counted by the C-state they left, where the source logs it (CSwitch events, not compact
 * batches). The same fields on ThreadStats, ProcessStats and HostStats, filled by name from one place.
 */
public final class ReadySplit {
    /** PreviousCState values kept apart; a larger one counts with the last. */
    static final int C_STATES = 16;

    public final Latencies idleWake = new Latencies();
    public final Latencies contended = new Latencies();
    /** Idle wake-ups and their ready time by PreviousCState; null until one is known. */
    long[] cStateCounts;
    long[] cStateSums;

    /** Count, sum, maximum and a sketch of one kind of ready time. */
    public static final class Latencies {
        long count;
        long sum;
        long max = Long.MIN_VALUE;
        /** Made at the first value: most threads of a window have only one kind. */
        DDSketch sketch;

        void add(long nanos, int bin) {
            count++;
            sum += nanos;
            if (nanos > max) max = nanos;
            if (sketch == null) sketch = ThreadStatsAccumulator.newSketch();
            ThreadStatsAccumulator.add(sketch, nanos, bin);
        }

        void merge(Latencies o) {
            count += o.count;
            sum += o.sum;
            max = Math.max(max, o.max);
            if (o.sketch != null) mergeSketch(o.sketch);
        }

        void mergeSketch(DDSketch s) {
            if (sketch == null) sketch = ThreadStatsAccumulator.newSketch();
            sketch.mergeWith(s);
        }

        public long count() { return count; }

        /** For a state store: the numbers, then the sketch in its protobuf form (-1: none). */
        void write(StateWriter o) {
            o.writeLong(count).writeLong(sum).writeLong(max);
            ByteBuffer b = sketch == null ? null : SketchBytes.of(sketch);
            o.writeInt(b == null ? -1 : b.remaining());
            if (b != null) o.raw(b.array(), b.arrayOffset() + b.position(), b.remaining());
        }

        void read(StateReader in) {
            count = in.readLong();
            sum = in.readLong();
            max = in.readLong();
            int n = in.readInt();
            sketch = n < 0 ? null : SketchBytes.read(ByteBuffer.wrap(in.raw(n)));
        }

        Long maxOrNull() {
            return count > 0 ? max : null;
        }
        public long sum() { return sum; }

        Long p99() {
            return ThreadStatsAccumulator.p99(sketch, count, max);
        }
    }

    /**
     * A switch-in with a ready time: from the idle thread when {@code fromIdle}, with the C-state it
     * left ({@code cState}, negative when not logged).
     */
    public void add(long readyNanos, boolean fromIdle, int cState) {
        add(readyNanos, ThreadStatsAccumulator.bin(readyNanos), fromIdle, cState);
    }

    /** {@link #add}, the value's sketch bin known ({@link ThreadStatsAccumulator#bin}). */
    void add(long readyNanos, int bin, boolean fromIdle, int cState) {
        if (!fromIdle) {
            contended.add(readyNanos, bin);
            return;
        }
        idleWake.add(readyNanos, bin);
        if (cState >= 0) {
            int c = Math.min(cState, C_STATES - 1);
            if (cStateCounts == null) {
                cStateCounts = new long[C_STATES];
                cStateSums = new long[C_STATES];
            }
            cStateCounts[c]++;
            cStateSums[c] += readyNanos;
        }
    }

    /** Every ready time's sketch: the two halves merged, in a new sketch (null when neither has one). */
    DDSketch merged() {
        if (idleWake.sketch == null && contended.sketch == null) return null;
        DDSketch all = ThreadStatsAccumulator.newSketch();
        if (idleWake.sketch != null) all.mergeWith(idleWake.sketch);
        if (contended.sketch != null) all.mergeWith(contended.sketch);
        return all;
    }

    public void merge(ReadySplit o) {
        idleWake.merge(o.idleWake);
        contended.merge(o.contended);
        if (o.cStateCounts == null) return;
        if (cStateCounts == null) {
            cStateCounts = new long[C_STATES];
            cStateSums = new long[C_STATES];
        }
        for (int i = 0; i < C_STATES; i++) {
            cStateCounts[i] += o.cStateCounts[i];
            cStateSums[i] += o.cStateSums[i];
        }
    }

    /** Adds the split of a ThreadStats, ProcessStats or HostStats record (its fields of these names). */
    @SuppressWarnings("unchecked")
    public void mergeRecord(SpecificRecordBase r) {
        mergeFields(idleWake, r, "readyIdleWake");
        mergeFields(contended, r, "readyContended");
        Map<CharSequence, Long> counts = (Map<CharSequence, Long>) r.get("readyIdleWakeByCState");
        Map<CharSequence, Long> sums = (Map<CharSequence, Long>) r.get("readyIdleWakeSumNanosByCState");
        if (counts == null || counts.isEmpty()) return;
        if (cStateCounts == null) {
            cStateCounts = new long[C_STATES];
            cStateSums = new long[C_STATES];
        }
        for (Map.Entry<CharSequence, Long> e : counts.entrySet()) {
            int c = cStateIndex(e.getKey());
            if (c < 0) continue;
            cStateCounts[c] += e.getValue();
            Long sum = sums == null ? null : sums.get(e.getKey());
            if (sum == null && sums != null) sum = sums.get(e.getKey().toString());
            if (sum != null) cStateSums[c] += sum;
        }
    }

    private static void mergeFields(Latencies l, SpecificRecordBase r, String prefix) {
        l.count += (Long) r.get(prefix + "Count");
        l.sum += (Long) r.get(prefix + "SumNanos");
        Long max = (Long) r.get(prefix + "MaxNanos");
        if (max != null) l.max = Math.max(l.max, max);
        ByteBuffer sketch = (ByteBuffer) r.get(prefix + "Sketch");
        if (sketch != null) l.mergeSketch(SketchBytes.read(sketch));
    }

    private static int cStateIndex(CharSequence key) {
        String k = key.toString();
        if (!k.startsWith("C")) return -1;
        try {
            return Math.min(Integer.parseInt(k.substring(1)), C_STATES - 1);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Sets the split's fields of a ThreadStats, ProcessStats or HostStats record. */
    public void fill(SpecificRecordBase r) {
        fill(r, true);
    }

    /** {@link #fill}, the sketches left null unless {@code sketches}. */
    public void fill(SpecificRecordBase r, boolean sketches) {
        fillFields(idleWake, r, "readyIdleWake", true, sketches);
        fillFields(contended, r, "readyContended", true, sketches);
        fillCStates(r);
    }

    /**
     * Sets the split's counts, sums, maps and sketches on a revision's {@code added} record
     * (ProcessStatsAdded, HostStatsAdded): what a reader adds up over revisions, so no maximum or percentile.
     */
    public void fillAdded(SpecificRecordBase r) {
        fillFields(idleWake, r, "readyIdleWake", false, true);
        fillFields(contended, r, "readyContended", false, true);
        fillCStates(r);
    }

    private void fillCStates(SpecificRecordBase r) {
        Map<String, Long> counts = new LinkedHashMap<>();
        Map<String, Long> sums = new LinkedHashMap<>();
        if (cStateCounts != null) {
            for (int i = 0; i < C_STATES; i++) {
                if (cStateCounts[i] == 0) continue;
                counts.put("C" + i, cStateCounts[i]);
                sums.put("C" + i, cStateSums[i]);
            }
        }
        r.put("readyIdleWakeByCState", counts);
        r.put("readyIdleWakeSumNanosByCState", sums);
    }

    private static void fillFields(Latencies l, SpecificRecordBase r, String prefix, boolean extremes, boolean sketches) {
        boolean any = l.count > 0;
        r.put(prefix + "Count", l.count);
        r.put(prefix + "SumNanos", l.sum);
        if (extremes) {
            r.put(prefix + "MaxNanos", any ? l.max : null);
            r.put(prefix + "P99Nanos", any ? l.p99() : null);
        }
        r.put(prefix + "Sketch", sketches && any && l.sketch != null ? SketchBytes.of(l.sketch) : null);
    }

    /** Copies the split's fields from one record to another (a roll-up's slim row). */
    public static void copy(SpecificRecordBase from, SpecificRecordBase to) {
        for (String prefix : new String[] {"readyIdleWake", "readyContended"}) {
            for (String f : new String[] {"Count", "SumNanos", "MaxNanos", "P99Nanos", "Sketch"}) to.put(prefix + f, from.get(prefix + f));
        }
        to.put("readyIdleWakeByCState", from.get("readyIdleWakeByCState"));
        to.put("readyIdleWakeSumNanosByCState", from.get("readyIdleWakeSumNanosByCState"));
    }

    /** For state stores: sketches in DDSketch's protobuf form, as the rows have them. */
    public void write(StateWriter o) {
        idleWake.write(o);
        contended.write(o);
        o.writeBoolean(cStateCounts != null);
        if (cStateCounts != null) {
            for (int i = 0; i < C_STATES; i++) o.writeLong(cStateCounts[i]).writeLong(cStateSums[i]);
        }
    }

    public void read(StateReader in) {
        idleWake.read(in);
        contended.read(in);
        if (in.readBoolean()) {
            cStateCounts = new long[C_STATES];
            cStateSums = new long[C_STATES];
            for (int i = 0; i < C_STATES; i++) {
                cStateCounts[i] = in.readLong();
                cStateSums[i] = in.readLong();
            }
        }
    }
}
