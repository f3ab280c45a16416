package io.swapstream.aggregate.rollup.streams;

import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.stage.StageSensors;
import io.swapstream.stage.StateStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Merges the final thread-window rows of one kind of group (process names, or hosts) per window, and
 * emits each group's row, final, when its window closes. A window waits for the hosts this task knows
 * to be live, each judged by its own progress (the latest window it has sent a row for), not by the
 * fleet's newest row: it closes once every live host has moved past it, or at most {@code maxWait}
 * after the first host did, or once no row for it has come for the grace (all wall clock). A row that
 * comes after its window closed is merged into the window's group, kept for that, and the group's row
 * goes out again with the next revision once such rows stop coming: nothing is dropped.
 * Its state, committed with its outputs (exactly-once v2): the groups (open and closed windows', as long
 * as the retention), the windows, each host's progress, and the last closed windows' rows for queries.
 *
 * @param <V> the roll-up row: {@code ProcessStats} or {@code HostStats}
 */
final class RollupProcessor<V> implements Processor<String, ThreadStats, String, V> {
    /** Makes a group's row. */
    interface RowMaker<V> {
        V make(RollupGroup group, String name, long windowStart, long windowEnd);
    }

    private static final Logger LOG = LoggerFactory.getLogger(RollupProcessor.class);

    /** An open window: its end, when a row for it last came, and when a host first moved past it (-1: none yet), wall clock. */
    private static final class OpenWindow {
        final long end;
        long lastRowMs;
        long passedMs = -1;

        OpenWindow(long end, long lastRowMs) {
            this.end = end;
            this.lastRowMs = lastRowMs;
        }
    }

    private final RollupGroup.Kind kind;
    private final RollupTopology.StoreNames names;
    private final long graceMs;
    private final long maxWaitMs;
    private final int keepWindows;
    private final long retentionMs;
    private final RowMaker<V> rows;
    /** Null for a service; given by {@code run}, which says when its input has ended. */
    private final RollupControl control;
    private final boolean countRowsIn;
    private long endsOfInputSeen;
    private ProcessorContext<String, V> context;
    private KeyValueStore<String, byte[]> groups;
    private KeyValueStore<String, byte[]> windows;
    private KeyValueStore<String, byte[]> hosts;
    private KeyValueStore<String, V> latest;
    private final TreeMap<Long, OpenWindow> open = new TreeMap<>();
    /** Closed windows that took rows since their rows went out: when the last such row came (wall clock). */
    private final TreeMap<Long, Long> revising = new TreeMap<>();
    /** Each host's progress as this task sees it: the latest window start of its rows, and when its last row came. */
    private final Map<String, HostProgress> progress = new HashMap<>();
    /** The latest window start of any row taken: the fleet's newest. */
    private long rowsTime = Long.MIN_VALUE;
    /** Windows from this start on keep their rows in the query store. */
    private long queriedFrom = Long.MIN_VALUE;
    /** The open windows' groups as objects: what the store holds, without decoding it again for every row. */
    private final Map<String, RollupGroup> cached = new HashMap<>();
    /** Closed windows a late row was logged for: one line per window. */
    private final Set<Long> lateLogged = new HashSet<>();
    private Sensor rowsIn;
    private Sensor lateRows;
    private Sensor rowsOut;
    private Sensor revisionsOut;
    private Sensor windowsClosed;
    private StageSensors sensors;

    /** @param countRowsIn whether this processor counts the rows it takes (both kinds take every row: one counts them) */
    RollupProcessor(RollupGroup.Kind kind, RollupTopology.StoreNames names, RollupSettings settings, RowMaker<V> rows, RollupControl control,
                    boolean countRowsIn) {
        this.control = control;
        this.kind = kind;
        this.names = names;
        this.graceMs = settings.graceMs();
        this.maxWaitMs = settings.maxWaitMs();
        this.keepWindows = settings.keepWindows();
        this.retentionMs = settings.retentionMs();
        this.rows = rows;
        this.countRowsIn = countRowsIn;
    }

    @Override
    public void init(ProcessorContext<String, V> context) {
        this.context = context;
        this.groups = context.getStateStore(names.groups());
        this.windows = context.getStateStore(names.windows());
        this.hosts = context.getStateStore(names.hosts());
        this.latest = context.getStateStore(names.latest());
        sensors = new StageSensors(context, "rollup");
        rowsIn = sensors.counter(StageSensors.ROWS_IN);
        lateRows = sensors.counter(StageSensors.ROLLUP_LATE_ROWS);
        rowsOut = sensors.counter(StageSensors.ROLLUPS_OUT);
        revisionsOut = sensors.counter(StageSensors.ROLLUP_REVISIONS_OUT);
        windowsClosed = sensors.counter(StageSensors.WINDOWS_CLOSED);
        open.clear();
        revising.clear();
        progress.clear();
        cached.clear();
        long now = context.currentSystemTimeMs();
        try (KeyValueIterator<String, byte[]> it = windows.all()) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                WindowState w = WindowState.decode(kv.value);
                long start = Long.parseLong(kv.key);
                rowsTime = Math.max(rowsTime, start);
                if (!w.closed()) open.put(start, new OpenWindow(w.end(), now));
                else if (w.revisionDue()) revising.put(start, now);
            }
        }
        try (KeyValueIterator<String, byte[]> it = hosts.all()) {
            // a restart counts as a row from each: live until proven otherwise
            it.forEachRemaining(kv -> progress.put(kv.key, new HostProgress(HostProgress.startOf(kv.value), now)));
        }
        long every = Math.max(100, Math.min(Math.min(graceMs, maxWaitMs) / 4, 5_000));
        context.schedule(Duration.ofMillis(every), PunctuationType.WALL_CLOCK_TIME, this::onClock);
        if (control != null) {
            endsOfInputSeen = control.endsOfInput();
            context.schedule(Duration.ofMillis(100), PunctuationType.WALL_CLOCK_TIME, at -> {
                long ends = control.endsOfInput();
                if (ends == endsOfInputSeen) return;
                endsOfInputSeen = ends;
                for (long start : new ArrayList<>(open.keySet())) closeWindow(start);
                for (long start : new ArrayList<>(revising.keySet())) revise(start);
            });
        }
    }

    @Override
    public void close() {
        if (sensors != null) sensors.close();
    }

    @Override
    public void process(Record<String, ThreadStats> record) {
        ThreadStats row = record.value();
        if (row == null || row.getHost() == null) {
            skip("no row, or a row without a host");
            return;
        }
        RuntimeException failed = io.swapstream.stage.RecordFailures.of(() -> take(row));
        if (failed != null) {
            // the groups are read again from the store: what this row changed in memory is forgotten
            cached.clear();
            skip(failed.toString());
        }
    }

    /** A row that cannot be taken is skipped, with its reason: a task that stopped on it would meet it at every restart. */
    private void skip(String reason) {
        LOG.error("row {} cannot be taken, skipped: {}", io.swapstream.stage.RecordFailures.where(context), reason);
    }

    private void take(ThreadStats row) {
        if (countRowsIn) rowsIn.record();
        long now = context.currentSystemTimeMs();
        long start = row.getWindowStartNanos();
        long end = row.getWindowEndNanos();
        String name = RollupGroup.nameOf(kind, row);
        boolean moved = noteProgress(row.getHost().toString(), start, now);
        OpenWindow window = open.get(start);
        if (window == null) {
            byte[] known = windows.get(windowKey(start));
            if (known != null && WindowState.decode(known).closed()) {
                takeLate(row, start, name, WindowState.decode(known), now);
                return;
            }
            window = new OpenWindow(end, now);
            open.put(start, window);
            windows.put(windowKey(start), new WindowState(end, false, false).encode());
        }
        window.lastRowMs = now;
        String key = groupKey(start, name);
        RollupGroup g = cached.get(key);
        if (g == null) {
            byte[] stored = groups.get(key);
            g = stored == null ? new RollupGroup(kind) : RollupGroup.decode(stored);
            cached.put(key, g);
        }
        g.add(row);
        groups.put(key, g.encode());
        if (start > rowsTime) rowsTime = start;
        // a host that moves on may be the last one an open window waits for
        if (moved) closeDue(now);
    }

    /** A row for a window that has closed: merged into its group, whose row goes out again with the next revision. */
    private void takeLate(ThreadStats row, long start, String name, WindowState window, long now) {
        lateRows.record();
        String key = groupKey(start, name);
        byte[] stored = groups.get(key);
        RollupGroup g = stored == null ? new RollupGroup(kind) : RollupGroup.decode(stored);
        g.add(row);
        groups.put(key, g.encode());
        if (!window.revisionDue()) windows.put(windowKey(start), new WindowState(window.end(), true, true).encode());
        revising.put(start, now);
        if (lateLogged.add(start)) {
            // warn, the level the commands show for the stages (docs/operations.md: logged once per window)
            LOG.warn("{} window {} ({}): rows of host {} came after it closed: merged, and its rows go out again revised",
                    kind.name().toLowerCase(), start, java.time.Instant.ofEpochSecond(0, start), row.getHost());
        }
    }

    /** The host has sent a row for the window starting at {@code start}: it has moved past every window before that; true when it just did. */
    private boolean noteProgress(String host, long start, long now) {
        HostProgress p = progress.get(host);
        p = p == null || start > p.start ? null : p;
        if (p == null) {
            progress.put(host, new HostProgress(start, now));
            hosts.put(host, new HostProgress(start, now).encode());
            return true;
        }
        p.lastRowMs = now;
        return false;
    }

    private void onClock(long now) {
        closeDue(now);
        List<Long> settled = new ArrayList<>();
        // the late rows of a host come together: its revision goes out once they stop coming
        long settle = Math.max(1_000, Math.min(graceMs, maxWaitMs) / 4);
        for (Map.Entry<Long, Long> e : revising.entrySet()) if (now - e.getValue() >= settle) settled.add(e.getKey());
        for (long start : settled) revise(start);
        forgetOldWindows();
    }

    /**
     * Closes the open windows that are due: every live host has moved past it, or the first host to move past
     * it did so {@code maxWait} ago, or no row for it has come for the grace.
     */
    private void closeDue(long now) {
        List<Long> due = new ArrayList<>();
        for (Map.Entry<Long, OpenWindow> e : open.entrySet()) {
            long start = e.getKey();
            OpenWindow w = e.getValue();
            boolean passed = rowsTime > start;
            if (passed && w.passedMs < 0) w.passedMs = now;
            boolean everyHostPast = passed && everyLiveHostPast(start, now);
            boolean waitedEnough = w.passedMs >= 0 && now - w.passedMs >= maxWaitMs;
            boolean quiet = now - w.lastRowMs >= graceMs;
            if (everyHostPast || waitedEnough || quiet) due.add(start);
        }
        for (long start : due) closeWindow(start);
    }

    /** Every host that sent a row within the maximum wait has sent one for a window after {@code start}. */
    private boolean everyLiveHostPast(long start, long now) {
        for (HostProgress p : progress.values()) {
            if (now - p.lastRowMs <= maxWaitMs && p.start <= start) return false;
        }
        return true;
    }

    private void closeWindow(long start) {
        OpenWindow w = open.remove(start);
        for (KeyValue<String, byte[]> kv : groupsOf(start)) {
            RollupGroup g = cached.remove(kv.key);
            emit(kv.key, g != null ? g : RollupGroup.decode(kv.value), start, w.end);
        }
        windows.put(windowKey(start), new WindowState(w.end, true, false).encode());
        windowsClosed.record();
        dropQueryRowsBefore(start);
        // the window's rows reach read_committed readers now, not up to a commit interval later
        context.commit();
    }

    /** The groups of a closed window that took late rows go out again, each with its next revision. */
    private void revise(long start) {
        revising.remove(start);
        byte[] known = windows.get(windowKey(start));
        if (known == null) return;
        WindowState w = WindowState.decode(known);
        for (KeyValue<String, byte[]> kv : groupsOf(start)) {
            RollupGroup g = RollupGroup.decode(kv.value);
            if (!g.changedSinceEmit()) continue;
            emit(kv.key, g, start, w.end());
            revisionsOut.record();
        }
        windows.put(windowKey(start), new WindowState(w.end(), true, false).encode());
        context.commit();
    }

    /** The group's row goes out (its window's first time, or a revision), and its state stays for late rows. */
    private void emit(String key, RollupGroup g, long start, long end) {
        g.emitted();
        String stored = key.substring(key.indexOf('/') + 1);
        String name = stored.isEmpty() ? null : stored;
        V row = rows.make(g, name, start, end);
        if (start >= queriedFrom) latest.put(key, row);
        groups.put(key, g.encode());
        context.forward(new Record<>(RollupTopology.rowKey(name, start), row, context.currentSystemTimeMs()));
        rowsOut.record();
    }

    private List<KeyValue<String, byte[]>> groupsOf(long start) {
        List<KeyValue<String, byte[]>> out = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = groups.prefixScan(windowKey(start) + "/", new StringSerializer())) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    /** The query store keeps the last {@code keepWindows} closed windows. */
    private void dropQueryRowsBefore(long newest) {
        List<String> closed = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = windows.reverseRange(null, windowKey(newest))) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                if (WindowState.decode(kv.value).closed()) closed.add(kv.key);
            }
        }
        if (closed.size() >= keepWindows) queriedFrom = Math.max(queriedFrom, Long.parseLong(closed.get(keepWindows - 1)));
        for (int i = keepWindows; i < closed.size(); i++) {
            List<String> keys = new ArrayList<>();
            try (KeyValueIterator<String, V> it = latest.prefixScan(closed.get(i) + "/", new StringSerializer())) {
                it.forEachRemaining(kv -> keys.add(kv.key));
            }
            if (keys.isEmpty()) break; // dropped at an earlier close, as every one before it
            keys.forEach(k -> StateStores.remove(latest, k));
        }
    }

    /** Closed windows older than the retention leave with their groups: a row for one after that would open it again. */
    private void forgetOldWindows() {
        long horizon = rowsTime - retentionMs * 1_000_000L;
        if (horizon > rowsTime) return; // before the clock's start
        List<String> old = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = windows.range(null, windowKey(Math.max(0, horizon)))) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                if (WindowState.decode(kv.value).closed() && Long.parseLong(kv.key) < horizon) old.add(kv.key);
            }
        }
        for (String k : old) {
            StateStores.remove(windows, k);
            for (KeyValue<String, byte[]> kv : groupsOf(Long.parseLong(k))) StateStores.remove(groups, kv.key);
            revising.remove(Long.parseLong(k));
            lateLogged.remove(Long.parseLong(k));
        }
        // hosts silent for the retention are gone
        List<String> gone = new ArrayList<>();
        for (Map.Entry<String, HostProgress> e : progress.entrySet()) if (e.getValue().start < horizon) gone.add(e.getKey());
        for (String h : gone) {
            progress.remove(h);
            StateStores.remove(hosts, h);
        }
    }

    /** A window start as a key that sorts in time: zero-padded. */
    static String windowKey(long start) {
        String digits = Long.toString(start);
        return "0".repeat(Math.max(0, 20 - digits.length())) + digits;
    }

    /** A group's key in the groups and query stores: its window, then its name ("" for none). */
    static String groupKey(long start, String name) {
        return windowKey(start) + "/" + (name == null ? "" : name);
    }
}
