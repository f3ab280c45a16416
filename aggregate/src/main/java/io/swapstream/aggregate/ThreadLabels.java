package io.swapstream.aggregate;

import io.swapstream.batch.ThreadLabel;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;

/**
 * A session's thread records, held once: the label each thread's rows get (its latest record), and two indexes on
 * those records that the wake edges read at every switch: the process a thread is in at the switch being taken, and
 * each process's image name. What memory lacks (a session the aggregate stage opened from its stores) comes from
 * the {@link LabelStore}, once.
 */
public final class ThreadLabels {
    private static final int NOT_INDEXED = Integer.MIN_VALUE;

    private final LabelStore store;
    private final Int2ObjectOpenHashMap<ThreadLabel> latest = new Int2ObjectOpenHashMap<>();
    private final Int2IntOpenHashMap processOfThread = new Int2IntOpenHashMap();
    private final Int2ObjectOpenHashMap<String> processNames = new Int2ObjectOpenHashMap<>();
    private boolean storedNamesRead;
    /**
     * The batch's thread records of threads that start after its first row, by start: a batch carries them before
     * its rows, and a TID reused within the batch (even twice) takes its new process only from its new thread's
     * start on.
     */
    private final List<ThreadLabel> laterStarts = new ArrayList<>();
    private int started;

    public ThreadLabels(LabelStore store) {
        this.store = store;
        processOfThread.defaultReturnValue(NOT_INDEXED);
    }

    /** The thread records a batch carries, before its rows; {@code firstNanos} is its first row's time. */
    void take(List<ThreadLabel> threads, long firstNanos) {
        laterStarts.clear();
        started = 0;
        for (ThreadLabel t : threads) {
            latest.put(t.threadId(), t);
            store.put(t);
            // a thread's end and rundown records repeat its start: they wait with it
            if (t.startNanos() != null && t.startNanos() > firstNanos) laterStarts.add(t);
            else processOfThread.put(t.threadId(), pidOf(t));
            if (t.processId() != null && t.processName() != null) processNames.put((int) t.processId(), t.processName());
        }
        if (laterStarts.size() > 1) laterStarts.sort(Comparator.comparingLong(ThreadLabel::startNanos));
    }

    /** The switches have reached {@code nanos}: threads started by then are in their new process. */
    void advanceTo(long nanos) {
        while (started < laterStarts.size() && laterStarts.get(started).startNanos() <= nanos) {
            ThreadLabel t = laterStarts.get(started++);
            processOfThread.put(t.threadId(), pidOf(t));
        }
    }

    /** The batch's rows are taken: every thread it started is in its new process. */
    void endOfBatch() {
        advanceTo(Long.MAX_VALUE);
    }

    /** The label of thread {@code tid}'s rows: its latest record; null when none says. */
    public ThreadLabel label(int tid) {
        ThreadLabel t = latest.get(tid);
        if (t == null && (t = store.get(tid)) != null) latest.put(tid, t);
        return t;
    }

    /** The process thread {@code tid} is in at the switch being taken, {@link WakeEdges#UNKNOWN} when no record says. */
    int processOf(int tid) {
        int pid = processOfThread.get(tid);
        if (pid == NOT_INDEXED) {
            ThreadLabel t = store.get(tid);
            // a record this batch carried stays the rows' label: the stored one is older
            if (t != null) latest.putIfAbsent(tid, t);
            processOfThread.put(tid, pid = t == null ? WakeEdges.UNKNOWN : pidOf(t));
        }
        return pid;
    }

    /** The image name of process {@code pid} by the records; null when none says. */
    String processName(int pid) {
        String n = processNames.get(pid);
        if (n == null && !storedNamesRead) {
            storedNamesRead = true;
            store.forEach(t -> {
                if (t.processId() != null && t.processName() != null) processNames.putIfAbsent((int) t.processId(), t.processName());
            });
            n = processNames.get(pid);
        }
        return n;
    }

    private static int pidOf(ThreadLabel t) {
        return t.processId() == null ? WakeEdges.UNKNOWN : t.processId();
    }
}
