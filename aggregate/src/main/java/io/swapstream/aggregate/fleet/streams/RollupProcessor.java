package io.swapstream.aggregate.fleet.streams;

import io.swapstream.aggregate.fleet.FleetGroup;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.state.StateFormat;
import io.swapstream.stage.StageSensors;
import io.swapstream.stage.StateStores;
import java.time.Duration;
import java.util.ArrayList;
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
 * emits each group's row once, final, when its window closes: once the rows' time passes the window's
 * end plus the grace, or once no row for the window has come for the grace in wall-clock time. The rows'
 * time is the latest window start seen: a row proves its session reached its window's start, not its
 * end (a session's last window goes out when the session ends, wherever in the window that is). A row for a window already closed is counted and logged, not merged.
 * Its state, committed with its outputs (exactly-once v2): the open groups, the windows (open or
 * closed, as long as the retention), and the last closed windows' rows for queries.
 *
 * @param <V> the roll-up row: {@code ProcessStats} or {@code HostStats}
 */
final class RollupProcessor<V> implements Processor<String, ThreadStats, String, V> {
    /** Makes a group's row. */
    interface RowMaker<V> {
        V make(FleetGroup group, String name, long windowStart, long windowEnd);
    }

    private static final Logger LOG = LoggerFactory.getLogger(RollupProcessor.class);

    private final FleetGroup.Kind kind;
    private final RollupTopology.StoreNames names;
    private final long graceMs;
    private final int keepWindows;
    private final long retentionMs;
    private final RowMaker<V> rows;
    /** Null for a service; given by {@code run}, which says when its input has ended. */
    private final RollupControl control;
    private long endsOfInputSeen;
    private ProcessorContext<String, V> context;
    private KeyValueStore<String, byte[]> groups;
    private KeyValueStore<String, byte[]> windows;
    private KeyValueStore<String, V> latest;
    /** Open windows by start: their end and when a row for them last came (wall clock; a restart counts as one). */
    private final TreeMap<Long, long[]> open = new TreeMap<>();
    /** The latest window start of any row taken: the rows' time. */
    private long rowsTime = Long.MIN_VALUE;
    /** The open windows' groups as objects: what the store holds, without decoding it again for every row. */
    private final Map<String, FleetGroup> cached = new java.util.HashMap<>();
    /** Closed windows a late row was logged for: one line per window. */
    private final Set<Long> lateLogged = new HashSet<>();
    private Sensor rowsIn;
    private Sensor lateRows;
    private Sensor rowsOut;
    private Sensor windowsClosed;
    private StageSensors sensors;

    RollupProcessor(FleetGroup.Kind kind, RollupTopology.StoreNames names, RollupSettings settings, RowMaker<V> rows, RollupControl control) {
        this.control = control;
        this.kind = kind;
        this.names = names;
        this.graceMs = settings.graceMs();
        this.keepWindows = settings.keepWindows();
        this.retentionMs = settings.retentionMs();
        this.rows = rows;
    }

    @Override
    public void init(ProcessorContext<String, V> context) {
        this.context = context;
        this.groups = context.getStateStore(names.groups());
        this.windows = context.getStateStore(names.windows());
        this.latest = context.getStateStore(names.latest());
        sensors = new StageSensors(context, "rollup");
        rowsIn = sensors.counter(StageSensors.ROWS_IN);
        lateRows = sensors.counter(StageSensors.ROLLUP_LATE_ROWS);
        rowsOut = sensors.counter(StageSensors.ROLLUPS_OUT);
        windowsClosed = sensors.counter(StageSensors.WINDOWS_CLOSED);
        open.clear();
        cached.clear();
        long now = context.currentSystemTimeMs();
        try (KeyValueIterator<String, byte[]> it = windows.all()) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                WindowState w = WindowState.decode(kv.value);
                long start = Long.parseLong(kv.key);
                rowsTime = Math.max(rowsTime, start);
                if (!w.closed()) open.put(start, new long[] {w.end(), now});
            }
        }
        long every = Math.max(100, Math.min(graceMs / 4, 5_000));
        context.schedule(Duration.ofMillis(every), PunctuationType.WALL_CLOCK_TIME, this::closeDue);
        if (control != null) {
            endsOfInputSeen = control.endsOfInput();
            context.schedule(Duration.ofMillis(100), PunctuationType.WALL_CLOCK_TIME, at -> {
                long ends = control.endsOfInput();
                if (ends == endsOfInputSeen) return;
                endsOfInputSeen = ends;
                for (long start : new ArrayList<>(open.keySet())) closeWindow(start);
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
        rowsIn.record();
        long start = row.getWindowStartNanos();
        long end = row.getWindowEndNanos();
        String name = FleetGroup.nameOf(kind, row);
        long[] window = open.get(start);
        if (window == null) {
            byte[] known = windows.get(windowKey(start));
            if (known != null && WindowState.decode(known).closed()) {
                lateRows.record();
                if (lateLogged.add(start)) {
                    LOG.warn("{} {}: a row of session {} came after window {} was final: counted in swapstream_rollup_late_rows_total, not merged"
                            + " (raise --grace if rows often come this late)", kind.name().toLowerCase(), name, row.getSession(), start);
                }
                return;
            }
            window = new long[] {end, 0};
            open.put(start, window);
            windows.put(windowKey(start), new WindowState(end, false).encode());
        }
        window[1] = context.currentSystemTimeMs();
        String key = groupKey(start, name);
        FleetGroup g = cached.get(key);
        if (g == null) {
            byte[] stored = groups.get(key);
            g = stored == null ? new FleetGroup(kind) : FleetGroup.decode(stored);
            cached.put(key, g);
        }
        g.add(row);
        groups.put(key, g.encode());
        if (start > rowsTime) {
            rowsTime = start;
            closeDue(-1);
        }
    }

    /** Closes the windows due: by the rows' time, or (when {@code now} is given) by the wall clock. */
    private void closeDue(long now) {
        List<Long> due = new ArrayList<>();
        for (Map.Entry<Long, long[]> e : open.entrySet()) {
            long end = e.getValue()[0];
            boolean byRows = rowsTime != Long.MIN_VALUE && end + graceMs * 1_000_000L <= rowsTime;
            boolean byClock = now >= 0 && now - e.getValue()[1] >= graceMs;
            if (byRows || byClock) due.add(e.getKey());
        }
        for (long start : due) closeWindow(start);
        if (!due.isEmpty() && now >= 0) forgetOldWindows();
    }

    private void closeWindow(long start) {
        long end = open.remove(start)[0];
        String prefix = windowKey(start) + "/";
        List<KeyValue<String, byte[]>> members = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = groups.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(members::add);
        }
        for (KeyValue<String, byte[]> kv : members) {
            String stored = kv.key.substring(prefix.length());
            String name = stored.isEmpty() ? null : stored;
            FleetGroup g = cached.remove(kv.key);
            V row = rows.make(g != null ? g : FleetGroup.decode(kv.value), name, start, end);
            latest.put(kv.key, row);
            StateStores.remove(groups, kv.key);
            context.forward(new Record<>(RollupTopology.rowKey(name, start), row, context.currentSystemTimeMs()));
            rowsOut.record();
        }
        windows.put(windowKey(start), new WindowState(end, true).encode());
        windowsClosed.record();
        dropQueryRowsBefore(start);
        // the window's rows reach read_committed readers now, not up to a commit interval later
        context.commit();
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
        for (int i = keepWindows; i < closed.size(); i++) {
            List<String> keys = new ArrayList<>();
            try (KeyValueIterator<String, V> it = latest.prefixScan(closed.get(i) + "/", new StringSerializer())) {
                it.forEachRemaining(kv -> keys.add(kv.key));
            }
            if (keys.isEmpty()) break; // dropped at an earlier close, as every one before it
            keys.forEach(k -> StateStores.remove(latest, k));
        }
    }

    /** Closed windows older than the retention leave: a row for one after that would open it again. */
    private void forgetOldWindows() {
        long horizon = rowsTime - retentionMs * 1_000_000L;
        List<String> old = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = windows.range(null, windowKey(Math.max(0, horizon)))) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                if (WindowState.decode(kv.value).closed() && Long.parseLong(kv.key) < horizon) old.add(kv.key);
            }
        }
        old.forEach(k -> StateStores.remove(windows, k));
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

    /** A window of the windows store: its end, and whether its rows have gone out final. */
    record WindowState(long end, boolean closed) {
        static final StateFormat FORMAT = new StateFormat("rollup window", 2);

        byte[] encode() {
            return FORMAT.write(o -> o.writeLong(end).writeBoolean(closed));
        }

        static WindowState decode(byte[] value) {
            return FORMAT.read(value, in -> new WindowState(in.readLong(), in.readBoolean()));
        }
    }
}
