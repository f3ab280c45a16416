package io.swapstream.aggregate;

import io.swapstream.schemas.avro.ThreadStats;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The numeric fields of the rows a stats store holds, in columns, kept up to date as rows are put and
 * removed: a top-N by any numeric field is a selection over numbers, with no store scan and no row
 * decoded. A row's JSON is made once, when first asked for, and kept until the row changes. One index
 * per task; the stream thread writes, query threads read.
 */
public final class RowIndex {
    /** Which rows a query takes. */
    public enum Rows {
        /** Whole-session rows. */
        WHOLE,
        /** The latest window kept (of the session asked for, or of all): one window, every thread in it. */
        LATEST,
        /** Every window kept. */
        ALL
    }

    /** A row a query selected: its store key, its value in the field asked for, and its JSON if made already. */
    public record Hit(String session, int threadId, long windowStart, double value, String storeKey, byte[] json, RowIndex index, int slot,
                      long stamp) {
        /** Keeps the row's JSON, unless the row changed since it was selected. */
        public void keepJson(byte[] bytes) {
            index.keepJson(slot, stamp, bytes);
        }
    }

    private static final long NO_WINDOW = Long.MIN_VALUE;
    private static final int COLUMNS = ThreadStatsFields.SORTABLE.size();

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicLong changes;
    private final Object2IntOpenHashMap<String> slotOf = new Object2IntOpenHashMap<>();
    private final IntArrayList free = new IntArrayList();
    private final Object2IntOpenHashMap<String> sessionIds = new Object2IntOpenHashMap<>();
    private final List<String> sessionNames = new ArrayList<>();
    private final IntArrayList freeSessions = new IntArrayList();
    private int[] sessionRows = new int[16];
    /** Per session id, its whole-session rows: its threads with statistics. */
    private int[] sessionThreads = new int[16];
    private int capacity = 1024;
    private int used;
    private String[] keys = new String[capacity];
    private int[] sessionOf = new int[capacity];
    private int[] threadOf = new int[capacity];
    private long[] windowOf = new long[capacity];
    private long[] stamps = new long[capacity];
    private byte[][] json = new byte[capacity][];
    private final double[][] columns = new double[COLUMNS][capacity];

    /** @param changes counts every change of every index of an instance: what an ETag is made of */
    public RowIndex(AtomicLong changes) {
        this.changes = changes;
        slotOf.defaultReturnValue(-1);
        sessionIds.defaultReturnValue(-1);
    }

    /** The row under {@code storeKey}, a window's when {@code windowStart} is given, a whole session's when null. */
    public void put(String storeKey, ThreadStats row, Long windowStart) {
        lock.writeLock().lock();
        try {
            int slot = slotOf.getInt(storeKey);
            if (slot < 0) {
                slot = free.isEmpty() ? used++ : free.popInt();
                if (slot >= capacity) grow();
                slotOf.put(storeKey, slot);
                keys[slot] = storeKey;
                int session = sessionId(row.getSession().toString());
                sessionOf[slot] = session;
                sessionRows[session]++;
                threadOf[slot] = row.getThreadId();
                windowOf[slot] = windowStart == null ? NO_WINDOW : windowStart;
                if (windowStart == null) sessionThreads[session]++;
            }
            for (int c = 0; c < COLUMNS; c++) columns[c][slot] = ThreadStatsFields.value(row, c);
            stamps[slot]++;
            json[slot] = null;
        } finally {
            lock.writeLock().unlock();
        }
        changes.incrementAndGet();
    }

    public void remove(String storeKey) {
        lock.writeLock().lock();
        try {
            int slot = slotOf.removeInt(storeKey);
            if (slot < 0) return;
            int session = sessionOf[slot];
            if (windowOf[slot] == NO_WINDOW) sessionThreads[session]--;
            if (--sessionRows[session] == 0) {
                sessionIds.removeInt(sessionNames.get(session));
                sessionNames.set(session, null);
                freeSessions.add(session);
            }
            keys[slot] = null;
            json[slot] = null;
            stamps[slot]++;
            free.add(slot);
        } finally {
            lock.writeLock().unlock();
        }
        changes.incrementAndGet();
    }

    /** The threads of {@code session} with a whole-session row here: each thread once, whatever its records. */
    public int threads(String session) {
        lock.readLock().lock();
        try {
            int id = sessionIds.getInt(session);
            return id < 0 ? 0 : sessionThreads[id];
        } finally {
            lock.readLock().unlock();
        }
    }

    /** True when the index has a row of {@code session}. */
    public boolean hasSession(String session) {
        lock.readLock().lock();
        try {
            return sessionIds.containsKey(session);
        } finally {
            lock.readLock().unlock();
        }
    }

    public int size() {
        lock.readLock().lock();
        try {
            return slotOf.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The {@code n} rows highest in {@code field} (nulls last; ties by session, thread, window), of
     * {@code session} or of all when null.
     */
    public List<Hit> top(String field, int n, String session, Rows rows) {
        int column = ThreadStatsFields.column(field);
        if (column < 0) throw new IllegalArgumentException("no numeric field " + field);
        lock.readLock().lock();
        try {
            int only = session == null ? -1 : sessionIds.getInt(session);
            if (session != null && only < 0) return List.of();
            double[] v = columns[column];
            TopSlots best = new TopSlots(Math.max(1, Math.min(n, slotOf.size())), v);
            if (rows == Rows.LATEST) {
                long latest = latestWindow(only);
                // no window kept: no row (NO_WINDOW marks the whole-session rows)
                for (int s = 0; latest != NO_WINDOW && s < used; s++) {
                    if (keys[s] == null || windowOf[s] != latest || (only >= 0 && sessionOf[s] != only)) continue;
                    best.offer(s);
                }
            } else {
                boolean windows = rows == Rows.ALL;
                for (int s = 0; s < used; s++) {
                    if (keys[s] == null || (windowOf[s] != NO_WINDOW) != windows || (only >= 0 && sessionOf[s] != only)) continue;
                    best.offer(s);
                }
            }
            int[] order = best.sorted();
            List<Hit> out = new ArrayList<>(order.length);
            for (int s : order) {
                out.add(new Hit(sessionNames.get(sessionOf[s]), threadOf[s], windowOf[s], v[s], keys[s], json[s], this, s, stamps[s]));
            }
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The order of a top-N: value descending, then session, thread and window ascending. */
    public static int compare(Hit a, Hit b) {
        int c = Double.compare(b.value(), a.value());
        if (c != 0) return c;
        c = a.session().compareTo(b.session());
        if (c != 0) return c;
        c = Integer.compare(a.threadId(), b.threadId());
        return c != 0 ? c : Long.compare(a.windowStart(), b.windowStart());
    }

    private void keepJson(int slot, long stamp, byte[] bytes) {
        lock.readLock().lock();
        try {
            // a benign race between readers: the same row's JSON either way
            if (stamps[slot] == stamp) json[slot] = bytes;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The start of the latest window kept, of session id {@code only} or of all when negative; NO_WINDOW for none. Under the read lock. */
    private long latestWindow(int only) {
        long latest = NO_WINDOW;
        for (int s = 0; s < used; s++) {
            if (keys[s] != null && windowOf[s] != NO_WINDOW && (only < 0 || sessionOf[s] == only)) latest = Math.max(latest, windowOf[s]);
        }
        return latest;
    }

    private int sessionId(String session) {
        int id = sessionIds.getInt(session);
        if (id >= 0) return id;
        if (!freeSessions.isEmpty()) {
            id = freeSessions.popInt();
            sessionNames.set(id, session);
        } else {
            id = sessionNames.size();
            sessionNames.add(session);
        }
        sessionIds.put(session, id);
        if (id >= sessionRows.length) {
            sessionRows = Arrays.copyOf(sessionRows, id * 2);
            sessionThreads = Arrays.copyOf(sessionThreads, id * 2);
        }
        return id;
    }

    private void grow() {
        capacity *= 2;
        keys = Arrays.copyOf(keys, capacity);
        sessionOf = Arrays.copyOf(sessionOf, capacity);
        threadOf = Arrays.copyOf(threadOf, capacity);
        windowOf = Arrays.copyOf(windowOf, capacity);
        stamps = Arrays.copyOf(stamps, capacity);
        json = Arrays.copyOf(json, capacity);
        for (int c = 0; c < COLUMNS; c++) columns[c] = Arrays.copyOf(columns[c], capacity);
    }

    /** The best n slots seen, as a min-heap on the top-N order (its root the worst kept). */
    private final class TopSlots {
        private final int[] heap;
        private final double[] values;
        private int size;

        TopSlots(int n, double[] values) {
            this.heap = new int[n];
            this.values = values;
        }

        void offer(int slot) {
            if (size < heap.length) {
                heap[size] = slot;
                up(size++);
            } else if (better(slot, heap[0])) {
                heap[0] = slot;
                down(0);
            }
        }

        /** True when {@code a} comes before {@code b} in a top-N. */
        private boolean better(int a, int b) {
            int c = Double.compare(values[a], values[b]);
            if (c != 0) return c > 0;
            if (sessionOf[a] != sessionOf[b]) return sessionNames.get(sessionOf[a]).compareTo(sessionNames.get(sessionOf[b])) < 0;
            if (threadOf[a] != threadOf[b]) return threadOf[a] < threadOf[b];
            return windowOf[a] < windowOf[b];
        }

        private void up(int i) {
            while (i > 0) {
                int parent = (i - 1) / 2;
                if (!better(heap[parent], heap[i])) break;
                swap(i, parent);
                i = parent;
            }
        }

        private void down(int i) {
            while (true) {
                int worst = i;
                for (int child = 2 * i + 1; child <= 2 * i + 2 && child < size; child++) {
                    if (better(heap[worst], heap[child])) worst = child;
                }
                if (worst == i) return;
                swap(i, worst);
                i = worst;
            }
        }

        private void swap(int a, int b) {
            int t = heap[a];
            heap[a] = heap[b];
            heap[b] = t;
        }

        /** The kept slots, best first. */
        int[] sorted() {
            int[] out = new int[size];
            for (int i = size - 1; i >= 0; i--) {
                out[i] = heap[0];
                heap[0] = heap[--size];
                down(0);
            }
            return out;
        }
    }
}
