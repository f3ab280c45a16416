package io.swapstream.aggregate.rollup.streams;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells the rollup stage's tasks in this JVM that their input has ended ({@code swapstream run}): each
 * closes its open windows at its next look, without waiting for the grace. A service has no end of input.
 */
public final class RollupControl {
    private final AtomicLong endsOfInput = new AtomicLong();

    /** Every open window closes now. */
    public void endOfInput() {
        endsOfInput.incrementAndGet();
    }

    long endsOfInput() {
        return endsOfInput.get();
    }
}
