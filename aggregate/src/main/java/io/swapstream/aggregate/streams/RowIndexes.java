package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.RowIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The row indexes of an aggregate instance's tasks, one per task while it runs here: what the query API
 * answers from. A task's index is built from its stats store when the task starts (after a restore, the
 * store's rows) and kept up to date as it emits.
 */
public final class RowIndexes {
    private final AtomicLong changes = new AtomicLong();
    private final Map<String, RowIndex> byTask = new ConcurrentHashMap<>();

    RowIndex open(String task) {
        RowIndex index = new RowIndex(changes);
        byTask.put(task, index);
        changes.incrementAndGet();
        return index;
    }

    void close(String task, RowIndex index) {
        if (byTask.remove(task, index)) changes.incrementAndGet();
    }

    /** Grows with every row put or removed and every task come or gone: an ETag of the instance's answers. */
    public long version() {
        return changes.get();
    }

    /** The instance's top {@code n} rows in {@code field}: each task's top n, merged. */
    public List<RowIndex.Hit> top(String field, int n, String session, RowIndex.Rows rows) {
        List<RowIndex.Hit> all = new ArrayList<>();
        for (RowIndex index : byTask.values()) all.addAll(index.top(field, n, session, rows));
        // each task's latest window: the instance's is the latest of them
        if (rows == RowIndex.Rows.LATEST) {
            long latest = all.stream().mapToLong(RowIndex.Hit::windowStart).max().orElse(Long.MIN_VALUE);
            all.removeIf(h -> h.windowStart() != latest);
        }
        all.sort(RowIndex::compare);
        return all.size() > n ? all.subList(0, n) : all;
    }

    /** The session's threads with statistics, each once. */
    public int threads(String session) {
        int n = 0;
        for (RowIndex index : byTask.values()) n += index.threads(session);
        return n;
    }

    public boolean hasSession(String session) {
        for (RowIndex index : byTask.values()) if (index.hasSession(session)) return true;
        return false;
    }

    public int rows() {
        return byTask.values().stream().mapToInt(RowIndex::size).sum();
    }
}
