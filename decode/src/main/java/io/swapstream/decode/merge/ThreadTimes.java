package io.swapstream.decode.merge;

import io.swapstream.batch.SwitchBatch;
import java.util.Arrays;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;

/**
 * What the merge keeps of each live thread between its switches: its last switch-out and, while it
 * waits, when it became Ready and who readied it (docs/architecture.md "Ready time"). Threads sit in slots of
 * parallel arrays found by one hash lookup per thread per switch; a slot holding nothing is freed,
 * so the table is bounded by the threads that have a time to remember.
 */
final class ThreadTimes {
    static final long NO_TIME = SwitchBatch.NO_TIME;
    static final int NONE = SwitchBatch.NONE;

    private final Int2IntOpenHashMap slots = new Int2IntOpenHashMap();
    int[] tid = new int[64];
    long[] lastOut = new long[64];
    long[] readyAt = new long[64];
    int[] readier = new int[64];
    int[] readierProcess = new int[64];
    private int[] free = new int[64];
    private int freeCount;
    private int used;

    ThreadTimes() {
        slots.defaultReturnValue(-1);
    }

    /** The thread's slot, or -1. */
    int slot(int t) {
        return slots.get(t);
    }

    /** The thread's slot, made empty when it had none. */
    int slotOrNew(int t) {
        int s = slots.get(t);
        if (s >= 0) return s;
        if (freeCount > 0) {
            s = free[--freeCount];
        } else {
            if (used == tid.length) grow();
            s = used++;
        }
        tid[s] = t;
        lastOut[s] = NO_TIME;
        readyAt[s] = NO_TIME;
        readier[s] = NONE;
        readierProcess[s] = NONE;
        slots.put(t, s);
        return s;
    }

    void clearReady(int s) {
        readyAt[s] = NO_TIME;
        readier[s] = NONE;
        readierProcess[s] = NONE;
    }

    /** Frees slot {@code s} when it remembers nothing. */
    void releaseIfEmpty(int s) {
        if (lastOut[s] != NO_TIME || readyAt[s] != NO_TIME) return;
        slots.remove(tid[s]);
        if (freeCount == free.length) free = Arrays.copyOf(free, free.length * 2);
        free[freeCount++] = s;
    }

    /** The thread ended: nothing of it carries over to a reuse of its TID. */
    void forget(int t) {
        int s = slots.get(t);
        if (s < 0) return;
        lastOut[s] = NO_TIME;
        clearReady(s);
        releaseIfEmpty(s);
    }

    void clear() {
        slots.clear();
        freeCount = 0;
        used = 0;
    }

    /** Slots in use, live or free: iterate these and skip the ones {@link #slot} does not name. */
    int capacityUsed() {
        return used;
    }

    boolean live(int s) {
        return slots.get(tid[s]) == s;
    }

    private void grow() {
        int n = tid.length * 2;
        tid = Arrays.copyOf(tid, n);
        lastOut = Arrays.copyOf(lastOut, n);
        readyAt = Arrays.copyOf(readyAt, n);
        readier = Arrays.copyOf(readier, n);
        readierProcess = Arrays.copyOf(readierProcess, n);
    }
}
