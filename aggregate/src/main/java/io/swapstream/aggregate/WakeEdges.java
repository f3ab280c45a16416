package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import it.unimi.dsi.fastutil.longs.Long2ObjectMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * Who woke whom in one session's window (docs/architecture.md "Wake edges"): per pair of processes,
 * the wake-ups the waker's threads gave the woken's, the waits they ended and the ready time that
 * followed. Keyed by process ids while the window is open, named when it closes: a switch costs a
 * map lookup, not a string.
 */
public final class WakeEdges {
    /** The waker of a wake-up readied from a DPC, an interrupt or the idle thread. */
    public static final int INTERRUPT = -1;
    /** A waker (or woken) process not known. */
    public static final int UNKNOWN = -2;
    public static final String INTERRUPT_NAME = "(interrupt)";
    public static final String UNKNOWN_NAME = "(unknown)";

    /** One edge's numbers: the waits it ended, and the ready times after (those known). */
    static final class Edge {
        final ReadySplit.Latencies waits = new ReadySplit.Latencies();
        final ReadySplit.Latencies readies = new ReadySplit.Latencies();

        void add(long waitNanos, long readyNanos, int readyBin) {
            waits.add(waitNanos, ThreadStatsAccumulator.bin(waitNanos));
            if (readyNanos != ThreadStatsAccumulator.NONE) readies.add(readyNanos, readyBin);
        }
    }

    /** (waker pid, woken pid) in one long: the map's key. */
    private final Long2ObjectOpenHashMap<Edge> edges = new Long2ObjectOpenHashMap<>();
    private long first = Long.MAX_VALUE;
    private long last = Long.MIN_VALUE;

    private static long key(int waker, int woken) {
        return (long) waker << 32 | (woken & 0xFFFFFFFFL);
    }

    public boolean isEmpty() {
        return edges.isEmpty();
    }

    /**
     * One wake-up at {@code nanos}: {@code waker}'s thread (or {@link #INTERRUPT}, {@link #UNKNOWN})
     * ended a wait of {@code waitNanos} of a thread of {@code woken}, which then was ready for
     * {@code readyNanos} ({@link ThreadStatsAccumulator#NONE} when not known).
     */
    public void add(long nanos, int waker, int woken, long waitNanos, long readyNanos) {
        add(nanos, waker, woken, waitNanos, readyNanos, readyNanos == ThreadStatsAccumulator.NONE ? 0 : ThreadStatsAccumulator.bin(readyNanos));
    }

    /** {@link #add}, the ready time's sketch bin known ({@link ThreadStatsAccumulator#bin}). */
    void add(long nanos, int waker, int woken, long waitNanos, long readyNanos, int readyBin) {
        if (nanos < first) first = nanos;
        if (nanos > last) last = nanos;
        long k = key(waker, woken);
        Edge e = edges.get(k);
        if (e == null) edges.put(k, e = new Edge());
        e.add(waitNanos, readyNanos, readyBin);
    }

    /**
     * The edges as records, named by {@code names} (a process id's image name, null when not known),
     * in the window given (null: first to last wake-up), most wake-ups first.
     */
    public List<WakeEdge> toRecords(String session, String host, Long windowStart, long windowEnd, IntFunction<String> names) {
        List<WakeEdge> out = new ArrayList<>(edges.size());
        // two pids may share an image name: their edges merge under it
        Map<String, WakeEdge> byName = new HashMap<>();
        for (Long2ObjectMap.Entry<Edge> e : edges.long2ObjectEntrySet()) {
            int waker = (int) (e.getLongKey() >> 32);
            int woken = (int) e.getLongKey();
            String wakerName = name(waker, names);
            String wokenName = name(woken, names);
            WakeEdge r = record(session, host, windowStart != null ? windowStart : first, windowStart != null ? windowEnd : last + 1,
                    wakerName, wokenName, e.getValue());
            WakeEdge had = byName.putIfAbsent(wakerName + "\n" + wokenName, r);
            if (had != null) merge(had, r);
        }
        out.addAll(byName.values());
        out.sort(Comparator.comparingLong(WakeEdge::getWakeCount).reversed()
                .thenComparing(r -> r.getWakerProcess().toString()).thenComparing(r -> r.getWokenProcess().toString()));
        return out;
    }

    static String name(int pid, IntFunction<String> names) {
        if (pid == INTERRUPT) return INTERRUPT_NAME;
        if (pid == UNKNOWN) return UNKNOWN_NAME;
        String n = names.apply(pid);
        return n == null ? UNKNOWN_NAME : n;
    }

    private static WakeEdge record(String session, String host, long start, long end, String waker, String woken, Edge e) {
        WakeEdge r = new WakeEdge();
        r.setWakerProcess(waker);
        r.setWokenProcess(woken);
        r.setHost(host);
        r.setSession(session);
        r.setWindowStartNanos(start);
        r.setWindowEndNanos(end);
        r.setWakeCount(e.waits.count);
        r.setWaitSumNanos(e.waits.sum);
        r.setWaitMaxNanos(e.waits.maxOrNull());
        r.setReadyCount(e.readies.count);
        r.setReadySumNanos(e.readies.sum);
        r.setReadyMaxNanos(e.readies.maxOrNull());
        r.setWaitSketch(e.waits.sketch == null ? null : SketchBytes.of(e.waits.sketch));
        r.setReadySketch(e.readies.sketch == null ? null : SketchBytes.of(e.readies.sketch));
        r.setWaitP99Nanos(e.waits.p99());
        r.setReadyP99Nanos(e.readies.p99());
        return r;
    }

    /**
     * Adds {@code from}'s numbers into {@code into} (the same edge and window: another pid of the same
     * image, another session of a host, another host of the fleet) and sets its percentiles again.
     */
    public static void merge(WakeEdge into, WakeEdge from) {
        into.setWakeCount(into.getWakeCount() + from.getWakeCount());
        into.setWaitSumNanos(into.getWaitSumNanos() + from.getWaitSumNanos());
        into.setWaitMaxNanos(max(into.getWaitMaxNanos(), from.getWaitMaxNanos()));
        into.setReadyCount(into.getReadyCount() + from.getReadyCount());
        into.setReadySumNanos(into.getReadySumNanos() + from.getReadySumNanos());
        into.setReadyMaxNanos(max(into.getReadyMaxNanos(), from.getReadyMaxNanos()));
        into.setWaitSketch(merged(into.getWaitSketch(), from.getWaitSketch()));
        into.setReadySketch(merged(into.getReadySketch(), from.getReadySketch()));
        into.setWindowStartNanos(Math.min(into.getWindowStartNanos(), from.getWindowStartNanos()));
        into.setWindowEndNanos(Math.max(into.getWindowEndNanos(), from.getWindowEndNanos()));
        percentiles(into);
    }

    private static Long max(Long a, Long b) {
        return a == null ? b : b == null ? a : Long.valueOf(Math.max(a, b));
    }

    private static ByteBuffer merged(ByteBuffer a, ByteBuffer b) {
        if (a == null) return b;
        if (b == null) return a;
        DDSketch s = SketchBytes.read(a);
        s.mergeWith(SketchBytes.read(b));
        return SketchBytes.of(s);
    }

    private static void percentiles(WakeEdge r) {
        r.setWaitP99Nanos(p99(r.getWaitSketch(), r.getWakeCount(), r.getWaitMaxNanos()));
        r.setReadyP99Nanos(p99(r.getReadySketch(), r.getReadyCount(), r.getReadyMaxNanos()));
    }

    private static Long p99(ByteBuffer sketch, long count, Long max) {
        if (sketch == null || count == 0) return null;
        return ThreadStatsAccumulator.p99(SketchBytes.read(sketch), count, max);
    }

    /** The open window's edges, for a state store (sketches in their protobuf form). */
    public void write(StateWriter o) {
        o.writeLong(first).writeLong(last).writeInt(edges.size());
        for (Long2ObjectMap.Entry<Edge> x : edges.long2ObjectEntrySet()) {
            Edge e = x.getValue();
            o.writeLong(x.getLongKey());
            e.waits.write(o);
            e.readies.write(o);
        }
    }

    public static WakeEdges read(StateReader in) {
        WakeEdges w = new WakeEdges();
        w.first = in.readLong();
        w.last = in.readLong();
        for (int n = in.readInt(); n > 0; n--) {
            long key = in.readLong();
            Edge e = new Edge();
            e.waits.read(in);
            e.readies.read(in);
            w.edges.put(key, e);
        }
        return w;
    }
}
