package io.swapstream.decode.merge;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.event.LabelEvent;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.etw.KernelEnums;
import io.swapstream.etw.SessionClock;
import java.util.function.Consumer;

/**
 * Takes the merge's items in time order: derives each switch's times (run slice, wait, ready time and
 * who readied it: docs/architecture.md "Derived times" and "Ready time") and adds the switch to the
 * batch being built; applies thread and process events to the thread directory and ReadyThread
 * events to the waiting thread. Hands a batch over when it is full.
 */
final class SwitchEmitter {
    /** {@link ThreadTimes#readier}: Ready since it was switched out still runnable (preempted), not readied by anyone. */
    static final int READY_AT_SWITCH_OUT = -3;

    private final String session;
    private final String host;
    private final SessionClock clock;
    private final MergeQueue queue;
    private final ExpansionCounters counters;
    private final Consumer<SwitchBatch> out;
    private final Consumer<ThreadLabel> threadsOut;
    private final SwitchBatch batch;
    private final int batchRows;
    private static final int INITIAL_ROWS = 256;
    final ThreadDirectory directory;
    /** Each live thread's latest switch-out and ready state (Unix nanoseconds), for its next switch-in. */
    final ThreadTimes times = new ThreadTimes();
    /** The time of the latest item emitted, clock ticks. */
    long lastEmittedTs = Long.MIN_VALUE;

    SwitchEmitter(String session, String host, SessionClock clock, MergeQueue queue, ExpansionCounters counters,
                  Consumer<SwitchBatch> out, Consumer<ThreadLabel> threadsOut, int batchRows) {
        this.session = session;
        this.host = host;
        this.clock = clock;
        this.queue = queue;
        this.counters = counters;
        this.out = out;
        this.threadsOut = threadsOut;
        this.batchRows = batchRows;
        // small at first, growing to batchRows as needed: a live session flushes at each release of the merge, a few
        // hundred rows, and a batch of batchRows (540 KiB at 4,096) held by each of a thousand open sessions is most of a heap
        this.batch = new SwitchBatch(Math.min(batchRows, INITIAL_ROWS)).reset(session, host)
                .clock(clock.baseTimestamp(), clock.baseNanos(), clock.ticksPerSecond());
        this.directory = new ThreadDirectory(session);
    }

    /** Hands over the rows emitted so far, if any, as a (partial) batch. */
    void flush() {
        if (batch.isEmpty()) return;
        out.accept(batch);
        batch.reset(session, host);
    }

    boolean hasRows() {
        return !batch.isEmpty();
    }

    /**
     * Emits the item at position {@code p} of source {@code src}, on processor {@code lane}. An item
     * that comes after later ones were emitted (a live session's limits let those out first) is late: a
     * late switch keeps its fields as logged but gets no derived times, which would measure against
     * state that has moved past it and could be negative, and it changes no processor's or thread's
     * state, so the switches after it stay right.
     */
    void emit(ProcessorLanes.Lane lane, int src, int p) {
        MergeQueue m = queue;
        long t = m.ts[src][p];
        boolean late = t < lastEmittedTs;
        long nanos = clock.toUnixNanos(t);
        if (MergeQueue.isEvent(src)) {
            if (late) counters.lateEvents++;
            if (m.kind(src, p) == MergeQueue.KIND_READY) {
                // a late ReadyThread event would date a wait before the switch-out that began it
                if (!late) onReady(lane, m.awakened(src, p), m.readyFlags(src, p), nanos);
            } else {
                onLabel(m.label[src][p], nanos);
            }
            lastEmittedTs = Math.max(lastEmittedTs, t);
            return;
        }
        if (late) counters.switchesOutOfOrder++;
        lastEmittedTs = Math.max(lastEmittedTs, t);
        counters.switches++;
        int oldTid = m.oldTid[src][p];
        int oldState = m.oldState[src][p];
        boolean oldIdle = oldTid == 0;
        long runNanos = SwitchBatch.NO_TIME;
        if (late) {
            // no state: left as it is
        } else if (lane.currentTid >= 0 && lane.currentTid != oldTid) {
            counters.oldThreadNotLastSwitchedIn++;
        } else if ((lane.currentTid == oldTid || lane.currentTid == ProcessorLanes.UNNAMED_THREAD) && !oldIdle) {
            runNanos = nanos - lane.currentSinceNanos;
        }
        if (!oldIdle && !late) switchedOut(oldTid, oldState, nanos);
        boolean unnamed = m.unnamed(src, p);
        int recordedNew = m.newTid[src][p];
        int newTid = recordedNew >= 0 && !unnamed ? recordedNew : SwitchBatch.NONE;
        boolean newIdle = newTid == 0;
        long sinceLast = SwitchBatch.NO_TIME;
        long readyNanos = SwitchBatch.NO_TIME;
        long waitsNanos = SwitchBatch.NO_TIME;
        int readier = SwitchBatch.NONE;
        int readierProcess = SwitchBatch.NONE;
        int s = newTid != SwitchBatch.NONE && !newIdle && !late ? times.slot(newTid) : -1;
        if (s >= 0) {
            long outAt = times.lastOut[s];
            if (outAt != SwitchBatch.NO_TIME) sinceLast = nanos - outAt;
            long readyAt = times.readyAt[s];
            if (readyAt != SwitchBatch.NO_TIME) {
                readyNanos = nanos - readyAt;
                if (outAt != SwitchBatch.NO_TIME) waitsNanos = readyAt - outAt;
                readier = times.readier[s];
                if (readier == READY_AT_SWITCH_OUT) readier = SwitchBatch.NONE;
                else readierProcess = times.readierProcess[s];
                times.clearReady(s);
                times.releaseIfEmpty(s);
            }
        }
        if (!late) {
            lane.currentTid = newTid != SwitchBatch.NONE ? newTid : unnamed ? ProcessorLanes.UNNAMED_THREAD : -1;
            lane.currentSinceNanos = nanos;
        }
        int source = MergeQueue.switchSource(src);
        boolean cswitch = source == SwitchBatch.SOURCE_CSWITCH;
        int reason = m.oldWaitReason[src][p];
        long ticks = m.newWaitTicks[src][p];
        int detail = m.detail[src][p];
        batch.add(lane.cpu, t, nanos, source, oldTid,
                oldIdle ? SwitchBatch.NONE : m.oldPriority[src][p],
                oldIdle ? SwitchBatch.NONE : oldState,
                oldIdle || reason < 0 ? SwitchBatch.NONE : reason,
                oldIdle || !cswitch ? SwitchBatch.NONE : m.oldWaitMode[src][p],
                newTid,
                cswitch && !newIdle && newTid != SwitchBatch.NONE ? m.newPriority[src][p] : SwitchBatch.NONE,
                newIdle || ticks < 0 ? SwitchBatch.NO_TIME : ticks,
                m.pmc[src][p], sinceLast, runNanos, readyNanos, waitsNanos, readier, readierProcess,
                cswitch && oldIdle ? MergeQueue.cStateOrRank(detail) : SwitchBatch.NONE,
                cswitch && !oldIdle ? MergeQueue.cStateOrRank(detail) : SwitchBatch.NONE,
                cswitch ? MergeQueue.decrement(detail) : SwitchBatch.NONE,
                cswitch ? MergeQueue.idealProcessor(detail) : SwitchBatch.NONE,
                cswitch ? m.remainingQuantum[src][p] : SwitchBatch.NONE);
        if (batch.count() >= batchRows) flush();
    }

    /** A thread left its processor at {@code nanos}: a new wait begins, and what readied it before is spent. */
    private void switchedOut(int tid, int state, long nanos) {
        int s = times.slotOrNew(tid);
        times.lastOut[s] = state == KernelEnums.STATE_TERMINATED ? SwitchBatch.NO_TIME : nanos;
        times.clearReady(s);
        if (KernelEnums.isRunnable(state)) {
            times.readyAt[s] = nanos;
            times.readier[s] = READY_AT_SWITCH_OUT;
        }
        times.releaseIfEmpty(s);
    }

    /**
     * A ReadyThread event in merged order: the first since the thread's last switch-out sets its
     * ready time (over a runnable switch-out's), readied by the thread then on this processor.
     */
    private void onReady(ProcessorLanes.Lane lane, int tid, int flags, long nanos) {
        int s = times.slotOrNew(tid);
        if (times.readyAt[s] != SwitchBatch.NO_TIME && times.readier[s] != READY_AT_SWITCH_OUT) return;
        times.readyAt[s] = nanos;
        int by = lane.currentTid;
        if ((flags & ReadyThread.FLAG_READIED_FROM_DPC) != 0 || by <= 0) {
            times.readier[s] = SwitchBatch.NONE;
            times.readierProcess[s] = SwitchBatch.NONE;
        } else {
            times.readier[s] = by;
            times.readierProcess[s] = directory.processOf(by);
        }
    }

    /** A thread or process event in merged order: it labels threads from now on. */
    private void onLabel(LabelEvent e, long nanos) {
        if (e instanceof ThreadEvent te) {
            ThreadLabel info = directory.onThread(te, nanos);
            if (te.isEnd()) times.forget(te.threadId());
            batch.addThread(info);
            if (threadsOut != null) threadsOut.accept(info);
        } else if (e instanceof ProcessEvent pe) {
            directory.onProcess(pe);
        }
    }
}
