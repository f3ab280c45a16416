package io.swapstream.cli;

import io.swapstream.etw.EtlReader;
import io.swapstream.generate.TraceReplay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A trace written into a watched file as its logger would ({@link TraceReplay}), which stops at given
 * fractions of its buffers until the test lets it go on. A fault meant for "mid-file" then happens
 * mid-file however slowly the machine runs the test: waiting for a file size instead races the
 * writer, which on two busy cores can finish before the fault (RebalanceIT's second instances once
 * joined after both files were whole, and got no buffer to take).
 */
final class GatedReplay implements AutoCloseable {
    /** How long a gate is waited for at most: a bound for a broken writer, not a timing. */
    private static final Duration BOUND = Duration.ofMinutes(5);

    private final Thread writer;
    private final int[] at;
    private final CountDownLatch[] reached;
    private final CountDownLatch[] passed;
    private volatile Throwable failure;

    private GatedReplay(Path whole, Path target, double speed, TraceReplay.Listener also, double[] fractions) throws Exception {
        long buffers = 0;
        try (EtlReader r = EtlReader.open(whole).framesOnly()) {
            while (r.next()) buffers++;
        }
        at = new int[fractions.length];
        reached = new CountDownLatch[fractions.length];
        passed = new CountDownLatch[fractions.length];
        for (int g = 0; g < fractions.length; g++) {
            at[g] = (int) Math.max(1, Math.min(buffers - 1, Math.round(buffers * fractions[g])));
            if (g > 0 && at[g] <= at[g - 1]) throw new IllegalArgumentException("gates must rise: " + java.util.Arrays.toString(fractions));
            reached[g] = new CountDownLatch(1);
            passed[g] = new CountDownLatch(1);
        }
        writer = new Thread(() -> {
            try {
                TraceReplay.replay(whole, target, speed, (i, traceNanos) -> {
                    if (also != null) also.written(i, traceNanos);
                    for (int g = 0; g < at.length; g++) {
                        if (i + 1 == at[g]) {
                            reached[g].countDown();
                            if (!passed[g].await(BOUND.toMinutes(), TimeUnit.MINUTES)) throw new IllegalStateException("gate " + g + " never opened");
                        }
                    }
                });
            } catch (Throwable e) {
                failure = e;
                for (CountDownLatch l : reached) l.countDown();
            }
        }, "replay " + target.getFileName());
        writer.start();
    }

    /** Starts writing {@code target} from {@code whole}, stopping after each fraction of its buffers until {@link #pass}. */
    static GatedReplay start(Path whole, Path target, double speed, double... fractions) throws Exception {
        return new GatedReplay(whole, target, speed, null, fractions);
    }

    /** As {@link #start}, telling {@code also} of each buffer written. */
    static GatedReplay start(Path whole, Path target, double speed, TraceReplay.Listener also, double... fractions) throws Exception {
        return new GatedReplay(whole, target, speed, also, fractions);
    }

    /** Waits until the writer stands at gate {@code g}: the buffers before it written, none after. */
    GatedReplay awaitAt(int g) throws InterruptedException {
        if (!reached[g].await(BOUND.toMinutes(), TimeUnit.MINUTES)) throw new AssertionError("the writer did not reach gate " + g);
        if (failure != null) throw new AssertionError("the writer failed before gate " + g, failure);
        return this;
    }

    /** Lets the writer go on past gate {@code g}. */
    void pass(int g) {
        passed[g].countDown();
    }

    /** Waits until the whole file is written (every gate must have been passed). */
    void join() throws InterruptedException {
        writer.join(BOUND.toMillis());
        if (writer.isAlive()) throw new AssertionError("the writer is still writing after " + BOUND);
        if (failure != null) throw new AssertionError("the writer failed", failure);
    }

    boolean writing() {
        return writer.isAlive();
    }

    /** Opens every gate, so that a test that failed half-way leaves no writer behind. */
    @Override
    public void close() throws InterruptedException {
        for (CountDownLatch l : passed) l.countDown();
        writer.join(BOUND.toMillis());
    }
}
