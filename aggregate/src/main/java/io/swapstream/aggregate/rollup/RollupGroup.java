package io.swapstream.aggregate.rollup;

import io.swapstream.aggregate.ReadySplit;
import io.swapstream.aggregate.SketchBytes;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.HostStatsAdded;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ProcessStatsAdded;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.state.StateFormat;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import com.datadoghq.sketch.ddsketch.DDSketch;
import it.unimi.dsi.fastutil.objects.Object2LongMap;
import it.unimi.dsi.fastutil.objects.Object2LongOpenHashMap;

/**
 * The final thread-window rows of one group (a process name, or a host) in one window, merged: counts
 * and sums added, maxima kept, sketches merged, and the ready time of each member of the other
 * dimension (each host of a process, each process of a host) for its top five. Mergeable by rows, so
 * the offline roll-up and the rollup stage give the same numbers.
 */
public final class RollupGroup {
    /** Which dimension a group is: its name is a process name, or a host. */
    public enum Kind { PROCESS, HOST }

    static final StateFormat FORMAT = new StateFormat("rollup group", 5);
    public static final int TOP = 5;
    private static final long NONE = Long.MIN_VALUE;

    private final Kind kind;
    /** The other dimension's members (hosts of a process; process names of a host, "" for none) to their ready time. */
    private final Object2LongOpenHashMap<String> members = new Object2LongOpenHashMap<>();
    private final Set<String> sessions = new HashSet<>();
    private long threads;
    private long switchIn;
    private long waitCount;
    private long waitSum;
    private long waitMin = Long.MAX_VALUE;
    private long waitMax = NONE;
    private long readyCount;
    private long readySum;
    private long readyMax = NONE;
    private long runCount;
    private long runSum;
    private DDSketch waits;
    private DDSketch readies;
    private DDSketch runs;
    private final ReadySplit split = new ReadySplit();
    /** The revision its row last went out with; -1 before its window closed. */
    private int revision = -1;
    /** Rows were merged since its row last went out (after its window closed: a revision is due). */
    private boolean changedSinceEmit;
    /** After its window closed: the rows merged since its row last went out, alone (null: none). */
    private RollupGroup added;
    /** What the row going out now adds to the previous revision: {@link #added} as {@link #emitted} found it. */
    private RollupGroup addedInRow;

    public RollupGroup(Kind kind) {
        this.kind = kind;
    }

    /** The group's key of {@code row}: its process name (null for none) or its host. */
    public static String nameOf(Kind kind, ThreadStats row) {
        if (kind == Kind.HOST) return row.getHost().toString();
        return row.getProcessName() == null ? null : row.getProcessName().toString();
    }

    /** Merges one final thread-window row of the group. */
    public void add(ThreadStats row) {
        if (revision >= 0) {
            if (added == null) added = new RollupGroup(kind);
            added.add(row);
        }
        changedSinceEmit = true;
        String member = kind == Kind.PROCESS ? row.getHost().toString()
                : row.getProcessName() == null ? "" : row.getProcessName().toString();
        members.addTo(member, row.getReadySumNanos());
        sessions.add(row.getSession().toString());
        threads++;
        switchIn += row.getSwitchInCount();
        waitCount += row.getWaitCount();
        waitSum += row.getWaitSumNanos();
        if (row.getWaitMinNanos() != null) waitMin = Math.min(waitMin, row.getWaitMinNanos());
        if (row.getWaitMaxNanos() != null) waitMax = Math.max(waitMax, row.getWaitMaxNanos());
        readyCount += row.getReadyCount();
        readySum += row.getReadySumNanos();
        if (row.getReadyMaxNanos() != null) readyMax = Math.max(readyMax, row.getReadyMaxNanos());
        runCount += row.getRunCount();
        runSum += row.getRunSumNanos();
        waits = merged(waits, row.getWaitSketch());
        readies = merged(readies, row.getReadySketch());
        runs = merged(runs, row.getRunSketch());
        split.mergeRecord(row);
    }

    private static DDSketch merged(DDSketch into, ByteBuffer bytes) {
        if (bytes == null) return into;
        DDSketch s = SketchBytes.read(bytes);
        if (into == null) return s;
        into.mergeWith(s);
        return into;
    }

    /**
     * The fields of a thread-window row a roll-up reads, in a row of its own: what crosses the repartition
     * (a row's wait reasons, priorities and readiers stay behind).
     */
    public static ThreadStats slim(ThreadStats row) {
        ThreadStats s = new ThreadStats();
        s.setSession(row.getSession());
        s.setHost(row.getHost());
        s.setThreadId(row.getThreadId());
        s.setProcessName(row.getProcessName());
        s.setWindowStartNanos(row.getWindowStartNanos());
        s.setWindowEndNanos(row.getWindowEndNanos());
        s.setComplete(row.getComplete());
        s.setSwitchInCount(row.getSwitchInCount());
        s.setWaitReasonCounts(Map.of());
        s.setWaitCount(row.getWaitCount());
        s.setWaitSumNanos(row.getWaitSumNanos());
        s.setWaitMinNanos(row.getWaitMinNanos());
        s.setWaitMaxNanos(row.getWaitMaxNanos());
        s.setRunCount(row.getRunCount());
        s.setRunSumNanos(row.getRunSumNanos());
        s.setPriorityHistogram(List.of());
        s.setReadyCount(row.getReadyCount());
        s.setReadySumNanos(row.getReadySumNanos());
        s.setReadyMaxNanos(row.getReadyMaxNanos());
        s.setTopReadiers(Map.of());
        s.setWaitSketch(row.getWaitSketch());
        s.setReadySketch(row.getReadySketch());
        s.setRunSketch(row.getRunSketch());
        s.setFinal$(row.getFinal$());
        ReadySplit.copy(row, s);
        return s;
    }

    public long threads() {
        return threads;
    }

    /** Rows were merged into it since its row last went out. */
    public boolean changedSinceEmit() {
        return changedSinceEmit;
    }

    /** The revision its row last went out with; -1 before its window closed. */
    public int revision() {
        return revision;
    }

    /** Its row goes out now: the first time revision 0, then one more each time. */
    public int emitted() {
        changedSinceEmit = false;
        addedInRow = revision >= 0 ? added : null;
        added = null;
        return ++revision;
    }

    public ProcessStats toProcessStats(String processName, long windowStart, long windowEnd, boolean isFinal) {
        Long[] wait = quantiles(waits, waitCount, waitMin, waitMax);
        ProcessStats p = fillRow(new ProcessStats(), wait, windowStart, windowEnd, isFinal);
        p.setProcessName(processName);
        p.setHosts(members.size());
        p.setWaitCount(waitCount);
        p.setWaitSumNanos(waitSum);
        p.setWaitMaxNanos(waitMax == NONE ? null : waitMax);
        p.setWaitP50Nanos(wait[0]);
        p.setWaitP90Nanos(wait[1]);
        p.setTopHosts(top());
        if (addedInRow != null) p.setAdded(addedInRow.fillAdded(new ProcessStatsAdded()));
        return p;
    }

    public HostStats toHostStats(String host, long windowStart, long windowEnd, boolean isFinal) {
        HostStats h = fillRow(new HostStats(), quantiles(waits, waitCount, waitMin, waitMax), windowStart, windowEnd, isFinal);
        h.setHost(host);
        h.setProcesses(members.size());
        h.setTopProcesses(top());
        if (addedInRow != null) h.setAdded(addedInRow.fillAdded(new HostStatsAdded()));
        return h;
    }

    /** The fields a process row and a host row share, by name as in {@link #fillAdded}: the window, counts, sums, quantiles, sketches. */
    private <R extends org.apache.avro.specific.SpecificRecordBase> R fillRow(R r, Long[] wait, long windowStart, long windowEnd,
                                                                            boolean isFinal) {
        Long[] ready = quantiles(readies, readyCount, 0, readyMax);
        r.put("windowStartNanos", windowStart);
        r.put("windowEndNanos", windowEnd);
        r.put("sessions", (long) sessions.size());
        r.put("threads", threads);
        r.put("switchInCount", switchIn);
        r.put("runSumNanos", runSum);
        r.put("readyCount", readyCount);
        r.put("readySumNanos", readySum);
        r.put("readyMaxNanos", readyMax == NONE ? null : readyMax);
        r.put("readyP50Nanos", ready[0]);
        r.put("readyP90Nanos", ready[1]);
        r.put("readyP99Nanos", ready[2]);
        r.put("waitP99Nanos", wait[2]);
        r.put("waitSketch", bytes(waits));
        r.put("readySketch", bytes(readies));
        r.put("runSketch", bytes(runs));
        r.put("final", isFinal);
        r.put("revision", Math.max(0, revision));
        split.fill(r);
        return r;
    }

    /** This group's counts, sums and sketches on a revision's {@code added} record: ProcessStatsAdded and HostStatsAdded have the same fields. */
    private <R extends org.apache.avro.specific.SpecificRecordBase> R fillAdded(R added) {
        added.put("threads", threads);
        added.put("switchInCount", switchIn);
        added.put("waitCount", waitCount);
        added.put("waitSumNanos", waitSum);
        added.put("readyCount", readyCount);
        added.put("readySumNanos", readySum);
        added.put("runSumNanos", runSum);
        added.put("waitSketch", bytes(waits));
        added.put("readySketch", bytes(readies));
        added.put("runSketch", bytes(runs));
        split.fillAdded(added);
        return added;
    }

    private static ByteBuffer bytes(DDSketch s) {
        return s == null || s.getCount() == 0 ? null : SketchBytes.of(s);
    }

    /** p50, p90, p99 as the thread rows have them (within [min, max]); nulls for none. */
    private static Long[] quantiles(DDSketch s, long count, long min, long max) {
        return ThreadStatsAccumulator.quantiles(s, count, min == Long.MAX_VALUE ? 0 : min, max);
    }

    /** The five members with the most ready time, most first (ties by name). */
    private Map<String, Long> top() {
        List<Object2LongMap.Entry<String>> all = new ArrayList<>(members.object2LongEntrySet());
        all.sort((a, b) -> a.getLongValue() != b.getLongValue() ? Long.compare(b.getLongValue(), a.getLongValue())
                : a.getKey().compareTo(b.getKey()));
        Map<String, Long> top = new LinkedHashMap<>();
        for (int i = 0; i < Math.min(TOP, all.size()); i++) top.put(all.get(i).getKey(), all.get(i).getLongValue());
        return top;
    }

    /** The group as state-store bytes. */
    public byte[] encode() {
        return FORMAT.write(o -> {
            o.writeByte(kind.ordinal());
            o.writeInt(revision);
            o.writeBoolean(changedSinceEmit);
            for (long v : new long[] {threads, switchIn, waitCount, waitSum, waitMin, waitMax, readyCount, readySum, readyMax, runCount, runSum}) {
                o.writeLong(v);
            }
            o.writeInt(members.size());
            for (Object2LongMap.Entry<String> e : members.object2LongEntrySet()) {
                o.string(e.getKey());
                o.writeLong(e.getLongValue());
            }
            o.writeInt(sessions.size());
            for (String s : sessions) o.string(s);
            for (DDSketch s : new DDSketch[] {waits, readies, runs}) {
                ByteBuffer b = s == null ? null : SketchBytes.of(s);
                o.writeInt(b == null ? -1 : b.remaining());
                if (b != null) o.raw(b.array(), b.arrayOffset() + b.position(), b.remaining());
            }
            split.write(o);
            byte[] a = added == null ? null : added.encode();
            o.writeInt(a == null ? -1 : a.length);
            if (a != null) o.raw(a, 0, a.length);
        });
    }

    public static RollupGroup decode(byte[] bytes) {
        return FORMAT.read(bytes, in -> {
            RollupGroup g = new RollupGroup(Kind.values()[in.readUnsignedByte()]);
            g.revision = in.readInt();
            g.changedSinceEmit = in.readBoolean();
            g.threads = in.readLong();
            g.switchIn = in.readLong();
            g.waitCount = in.readLong();
            g.waitSum = in.readLong();
            g.waitMin = in.readLong();
            g.waitMax = in.readLong();
            g.readyCount = in.readLong();
            g.readySum = in.readLong();
            g.readyMax = in.readLong();
            g.runCount = in.readLong();
            g.runSum = in.readLong();
            for (int n = in.readInt(); n > 0; n--) g.members.put(in.string(), in.readLong());
            for (int n = in.readInt(); n > 0; n--) g.sessions.add(in.string());
            DDSketch[] s = new DDSketch[3];
            for (int i = 0; i < 3; i++) {
                int n = in.readInt();
                if (n >= 0) s[i] = SketchBytes.read(ByteBuffer.wrap(in.raw(n)));
            }
            g.waits = s[0];
            g.readies = s[1];
            g.runs = s[2];
            g.split.read(in);
            int a = in.readInt();
            if (a >= 0) g.added = decode(in.raw(a));
            return g;
        });
    }
}
