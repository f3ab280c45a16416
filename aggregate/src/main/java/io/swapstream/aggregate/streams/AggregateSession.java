package io.swapstream.aggregate.streams;

import io.swapstream.schemas.state.StateFormat;


/**
 * What the aggregate stage knows of one session besides its accumulators, committed with its
 * outputs: how many switches and thread records arrived against what the decode stage says it
 * sent, how the session ended, and the statistics' carried state (open window, PMC baselines).
 */
final class AggregateSession {
    static final StateFormat FORMAT = new StateFormat("aggregate session progress", 6);

    String host;
    long switches;
    long threads;
    /** From the decode stage's end-of-session record; -1 until then. */
    long expectedSwitches = -1;
    long expectedThreads = -1;
    String endReason;
    boolean done;
    /** Batches that came after the session's statistics were final. */
    long lateBatches;
    /** Batches taken; those from {@link #flushedBatches} on are in the redo store, their effect not yet in the accumulators'. */
    long batches;
    long flushedBatches;
    long redoBytes;
    /** SessionStatistics.writeState. */
    byte[] statistics = new byte[0];
    /**
     * The decode stage's number of the next batch ({@code batch-sequence} header): a batch below it was taken
     * already (its offsets reset by an operator, say), one above it means batches in between are missing.
     */
    long nextSequence;
    /** Wall-clock time the session ended here, for its retention. */
    long endedMs;

    boolean allArrived() {
        return !done && expectedSwitches >= 0 && switches >= expectedSwitches && threads >= expectedThreads;
    }

    byte[] encode() {
        return FORMAT.write(o -> {
            o.nullableString(host);
            o.writeLong(switches);
            o.writeLong(threads);
            o.writeLong(expectedSwitches);
            o.writeLong(expectedThreads);
            o.nullableString(endReason);
            o.writeBoolean(done);
            o.writeLong(lateBatches);
            o.writeLong(batches);
            o.writeLong(flushedBatches);
            o.writeLong(redoBytes);
            o.bytes(statistics);
            o.writeLong(nextSequence);
            o.writeLong(endedMs);
        });
    }

    static AggregateSession decode(byte[] b) {
        AggregateSession s = new AggregateSession();
        if (b == null) return s;
        return FORMAT.read(b, in -> {
            s.host = in.nullableString();
            s.switches = in.readLong();
            s.threads = in.readLong();
            s.expectedSwitches = in.readLong();
            s.expectedThreads = in.readLong();
            s.endReason = in.nullableString();
            s.done = in.readBoolean();
            s.lateBatches = in.readLong();
            s.batches = in.readLong();
            s.flushedBatches = in.readLong();
            s.redoBytes = in.readLong();
            s.statistics = in.bytes();
            s.nextSequence = in.readLong();
            s.endedMs = in.readLong();
            return s;
        });
    }
}
