package io.swapstream.aggregate.rollup;

import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Final thread-window rows of any number of hosts, rolled up per group (process name, or host) and
 * window: the offline form of the rollup stage, with the same {@link RollupGroup}.
 */
public final class Rollups {
    /** A group in one window. */
    public record Key(String name, long windowStart, long windowEnd) {}

    private final RollupGroup.Kind kind;
    private final Map<Key, RollupGroup> groups = new HashMap<>();

    public Rollups(RollupGroup.Kind kind) {
        this.kind = kind;
    }

    /** Takes a row if it is a window row (whole-session rows are not rolled up). */
    public void add(ThreadStats windowRow) {
        Key k = new Key(RollupGroup.nameOf(kind, windowRow), windowRow.getWindowStartNanos(), windowRow.getWindowEndNanos());
        groups.computeIfAbsent(k, x -> new RollupGroup(kind)).add(windowRow);
    }

    public void addAll(List<ThreadStats> windowRows) {
        windowRows.forEach(this::add);
    }

    /** Every group's row, final, by window then name (null first). */
    public List<ProcessStats> processRows() {
        if (kind != RollupGroup.Kind.PROCESS) throw new IllegalStateException("a roll-up by " + kind);
        List<ProcessStats> out = new ArrayList<>();
        for (Key k : keys()) out.add(groups.get(k).toProcessStats(k.name(), k.windowStart(), k.windowEnd(), true));
        return out;
    }

    public List<HostStats> hostRows() {
        if (kind != RollupGroup.Kind.HOST) throw new IllegalStateException("a roll-up by " + kind);
        List<HostStats> out = new ArrayList<>();
        for (Key k : keys()) out.add(groups.get(k).toHostStats(k.name(), k.windowStart(), k.windowEnd(), true));
        return out;
    }

    private List<Key> keys() {
        List<Key> keys = new ArrayList<>(groups.keySet());
        keys.sort(Comparator.comparingLong(Key::windowStart).thenComparing(Key::name, Comparator.nullsFirst(Comparator.naturalOrder())));
        return keys;
    }
}
