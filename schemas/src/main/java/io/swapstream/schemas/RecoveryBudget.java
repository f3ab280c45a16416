package io.swapstream.schemas;

import java.util.ArrayDeque;

/**
 * How many times a component may recover from the same kind of failure in a sliding window: a
 * failure that keeps coming is not transient, and the component should stop instead.
 */
public final class RecoveryBudget {
    private final int max;
    private final long windowMs;
    private final ArrayDeque<Long> recent = new ArrayDeque<>();

    public RecoveryBudget(int max, long windowMs) {
        this.max = max;
        this.windowMs = windowMs;
    }

    /** True, and counted, when fewer than {@code max} recoveries happened in the window before {@code nowMs}. */
    public synchronized boolean spend(long nowMs) {
        while (!recent.isEmpty() && nowMs - recent.peekFirst() > windowMs) recent.pollFirst();
        if (recent.size() >= max) return false;
        recent.addLast(nowMs);
        return true;
    }
}
