package io.swapstream.aggregate.streams;

import io.swapstream.schemas.state.StateFields;
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

    private static final StateFields<AggregateSession> FIELDS = new StateFields<AggregateSession>()
            .nullableString(s -> s.host, (s, v) -> s.host = v)
            .longField(s -> s.switches, (s, v) -> s.switches = v)
            .longField(s -> s.threads, (s, v) -> s.threads = v)
            .longField(s -> s.expectedSwitches, (s, v) -> s.expectedSwitches = v)
            .longField(s -> s.expectedThreads, (s, v) -> s.expectedThreads = v)
            .nullableString(s -> s.endReason, (s, v) -> s.endReason = v)
            .booleanField(s -> s.done, (s, v) -> s.done = v)
            .longField(s -> s.lateBatches, (s, v) -> s.lateBatches = v)
            .longField(s -> s.batches, (s, v) -> s.batches = v)
            .longField(s -> s.flushedBatches, (s, v) -> s.flushedBatches = v)
            .longField(s -> s.redoBytes, (s, v) -> s.redoBytes = v)
            .bytes(s -> s.statistics, (s, v) -> s.statistics = v)
            .longField(s -> s.nextSequence, (s, v) -> s.nextSequence = v)
            .longField(s -> s.endedMs, (s, v) -> s.endedMs = v);

    byte[] encode() {
        return FORMAT.write(o -> FIELDS.write(this, o));
    }

    static AggregateSession decode(byte[] b) {
        AggregateSession s = new AggregateSession();
        return b == null ? s : FORMAT.read(b, in -> FIELDS.read(s, in));
    }
}
