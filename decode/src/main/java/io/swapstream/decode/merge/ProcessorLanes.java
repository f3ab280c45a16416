package io.swapstream.decode.merge;

import java.util.Arrays;

/**
 * The merge's view of each processor: what its own buffers have shown so far (the evidence that
 * lets items leave the merge) and, in merged order, the thread on it and since when. Grows when a
 * trace names a processor beyond its header's count.
 */
final class ProcessorLanes {
    /** {@link Lane#currentTid}: a thread came on, but its switch left before its id was known. */
    static final int UNNAMED_THREAD = -2;

    static final class Lane {
        final int cpu;
        /** The latest time of an event this processor wrote as it happened (anything but batch packets). */
        long eventTs = Long.MIN_VALUE;
        /** The latest compact packet time. */
        long packetTs = Long.MIN_VALUE;
        /** Its last compact switch waits for the next one to name its new thread: always its packet queue's newest item. */
        boolean pending;
        /** Merged order: the thread on this processor (-1 unknown), and when it came on. */
        int currentTid = -1;
        long currentSinceNanos;

        Lane(int cpu) {
            this.cpu = cpu;
        }
    }

    private Lane[] lanes;

    ProcessorLanes(int processors) {
        reset(Math.max(1, processors));
    }

    /** Processor {@code cpu}'s lane, made when the trace names it first. */
    Lane get(int cpu) {
        if (cpu >= lanes.length) {
            Lane[] bigger = Arrays.copyOf(lanes, cpu + 1);
            for (int i = lanes.length; i < bigger.length; i++) bigger[i] = new Lane(i);
            lanes = bigger;
        }
        return lanes[cpu];
    }

    /** Processor {@code cpu}'s lane, which the trace has named. */
    Lane at(int cpu) {
        return lanes[cpu];
    }

    int count() {
        return lanes.length;
    }

    /** {@code n} fresh lanes: for a checkpoint being read. */
    void reset(int n) {
        lanes = new Lane[n];
        for (int i = 0; i < n; i++) lanes[i] = new Lane(i);
    }
}
