package io.swapstream.decode.merge;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.event.MalformedEventException;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.SessionClock;
import io.swapstream.etw.TraceEvent;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.util.function.Consumer;

/**
 * Expands one session's CSwitch events and compact batches into {@link SwitchRow} rows and merges
 * the processors into time order (docs/etw-formats.md §5, docs/architecture.md "Expansion" and
 * "Merge"). Its parts: {@link MergeIntake} takes the events in buffer order into the
 * {@link MergeQueue}; {@link ReleasePolicy} says when the queue's head may leave, from what every
 * processor has shown ({@link ProcessorLanes}, {@link BufferLateness}) and the {@link MergeLimits};
 * {@link SwitchEmitter} derives each switch's times and builds the batches; {@link MergeCheckpoint}
 * writes and reads the whole state.
 */
public final class SwitchExpander {
    /** Rows of a full batch, when the caller does not say. */
    public static final int DEFAULT_BATCH_ROWS = 4096;

    private final ExpansionCounters counters = new ExpansionCounters();
    private final MergeQueue queue = new MergeQueue();
    private final ProcessorLanes lanes;
    private final MergeIntake intake;
    private final ReleasePolicy policy;
    private final SwitchEmitter emitter;
    private final MergeCheckpoint checkpoint;

    /**
     * @param limits     what the merge may wait for: a finished file's lateness, or a live session's limits
     * @param out        takes each full batch (and the rest at {@link #flush}); the batch is reused
     * @param threadsOut takes each thread event's updated info, in time order; may be null
     * @param batchRows  rows in a full batch
     */
    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          MergeLimits limits, Consumer<SwitchBatch> out, Consumer<ThreadLabel> threadsOut, int batchRows) {
        this.lanes = new ProcessorLanes(processors);
        this.intake = new MergeIntake(queue, lanes, counters, maximumWaitReason);
        this.policy = new ReleasePolicy(lanes, intake, counters, limits, clock.ticksPerSecond());
        this.emitter = new SwitchEmitter(session, host, clock, queue, counters, out, threadsOut, batchRows);
        this.checkpoint = new MergeCheckpoint(lanes, queue, intake, policy, emitter, counters);
    }

    public ExpansionCounters counters() { return counters; }

    /** Items waiting in the merge now. */
    public int queued() { return queue.size(); }

    /** Bytes the merge's queue takes now. */
    public long queuedBytes() { return queue.bytesHeld(); }

    /** The largest lateness of the session's buffers so far, in clock ticks. */
    public long maxLatenessTicks() { return intake.lateness.max(); }

    /** The time of the latest item emitted, in clock ticks; {@link Long#MIN_VALUE} before any. */
    public long lastEmittedTimestamp() { return emitter.lastEmittedTs; }

    /** The time of the newest event read, in clock ticks; {@link Long#MIN_VALUE} before any. */
    public long newestReadTimestamp() { return intake.frontier; }

    /**
     * The time, in clock ticks, up to which every processor's events are in what was read: the earliest of their latest
     * evidence; {@link Long#MIN_VALUE} when a processor has shown nothing. Asked once, when a session ends incomplete.
     */
    public long knownUntilTimestamp() { return policy.knownUntil(); }

    /**
     * Takes one event of the session, in buffer order.
     *
     * @throws MalformedEventException when a switch payload does not fit its layout
     */
    public void onEvent(TraceEvent ev) {
        intake.onEvent(ev);
    }

    /**
     * Ends the buffer of processor {@code cpu} whose events were just taken, and lets out what the
     * merge knows to be next. Once per buffer, not per event: lateness is a buffer's, and whether an
     * item may leave depends on every processor, which costs a pass over them.
     */
    public void release(int cpu) {
        intake.endBuffer(cpu);
        drain(false);
    }

    /** Ends the session: everything left leaves in time order; each processor's last switch keeps an unknown new thread. */
    public void finish() {
        intake.endOfSession();
        drain(true);
        flush();
    }

    /** Hands over the rows emitted so far, if any, as a (partial) batch. */
    public void flush() {
        emitter.flush();
    }

    public void writeState(StateWriter o) {
        checkpoint.write(o);
    }

    public void readState(StateReader in) {
        checkpoint.read(in);
    }

    private void drain(boolean all) {
        MergeQueue m = queue;
        policy.beginPass();
        int src;
        while ((src = m.peek()) >= 0) {
            int p = m.headPosition(src);
            if (!all) {
                boolean complete = m.complete(src, p);
                long t = m.ts[src][p];
                // most items leave on the bound of the last pass: the policy is asked only at its edge
                if (!complete || t >= policy.safeBefore) {
                    if (!policy.mayLeave(t, complete, m.size())) return;
                    if (!complete) forceOut(src, p);
                }
            }
            emitter.emit(lanes.at(MergeQueue.cpu(src)), src, p);
            m.pop();
        }
    }

    /** The switch at the head of {@code src} leaves before its new thread is known: its processor's pending one. */
    private void forceOut(int src, int p) {
        lanes.get(MergeQueue.cpu(src)).pending = false;
        queue.markUnnamed(src, p);
        counters.switchesBeforeNewThreadKnown++;
    }
}
