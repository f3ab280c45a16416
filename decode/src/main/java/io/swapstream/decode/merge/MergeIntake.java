package io.swapstream.decode.merge;

import io.swapstream.decode.event.CSwitchEvent;
import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.CompactSwitchSink;
import io.swapstream.decode.event.MalformedEventException;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.KernelEnums;
import io.swapstream.etw.TraceEvent;
import java.nio.ByteBuffer;

/**
 * Takes a session's events in buffer order into the merge's queue: CSwitch events and compact
 * packets as switches, ReadyThread events, and thread and process events as labels. Notes what each
 * processor has shown (its lane's evidence), the latest time any processor has logged (the
 * frontier), and how late the buffers come. A compact switch is queued incomplete: the next switch
 * on its processor names its new thread (docs/architecture.md "Expansion").
 */
final class MergeIntake {
    private final MergeQueue queue;
    private final ProcessorLanes lanes;
    private final ExpansionCounters counters;
    private final int maximumWaitReason;
    /** How late this session's buffers have come so far. */
    BufferLateness lateness = new BufferLateness();
    /** Arrival order: ties at equal times, on one processor, keep it. */
    long seq;
    /** The latest time any processor has logged. */
    long frontier = Long.MIN_VALUE;
    boolean sawCompact;
    boolean sawCSwitch;
    /** The processor of the compact batch being decoded, for its packets. */
    private ProcessorLanes.Lane compactLane;
    private final CompactSwitchSink packets = this::onPacket;

    MergeIntake(MergeQueue queue, ProcessorLanes lanes, ExpansionCounters counters, int maximumWaitReason) {
        this.queue = queue;
        this.lanes = lanes;
        this.counters = counters;
        this.maximumWaitReason = maximumWaitReason;
    }

    /**
     * Takes one event of the session, in buffer order.
     *
     * @throws MalformedEventException when a payload does not fit its layout
     */
    void onEvent(TraceEvent ev) {
        lateness.onEvent(ev);
        int hook = ev.hookId();
        ProcessorLanes.Lane lane = lanes.get(ev.processor());
        if (hook == CSwitchEvent.HOOK_ID) {
            onCSwitch(ev, lane);
        } else if (hook == CompactBatchDecoder.HOOK_ID) {
            counters.compactBatches++;
            sawCompact = true;
            compactLane = lane;
            CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), maximumWaitReason, packets);
        } else if (hook == ReadyThread.HOOK_ID) {
            // under any header type that carries the HookId, as CSwitch (docs/etw-formats.md §7)
            ReadyThread.check(ev.payloadLength());
            counters.readyEvents++;
            queue.pushReady(MergeQueue.events(lane.cpu), ev.timestamp(), nextSeq(),
                    ReadyThread.awakenedThreadId(ev.data(), ev.payloadOffset()), ReadyThread.flags(ev.data(), ev.payloadOffset()));
            notePeak();
        } else if (hook >= 0 && ev.headerType().isSystem()) {
            if (ThreadEvent.handles(hook)) {
                counters.threadEvents++;
                queue.pushLabel(MergeQueue.events(lane.cpu), nextSeq(), ThreadEvent.decode(ev));
                notePeak();
            } else if (ProcessEvent.handles(hook)) {
                counters.processEvents++;
                queue.pushLabel(MergeQueue.events(lane.cpu), nextSeq(), ProcessEvent.decode(ev));
                notePeak();
            }
        }
        long ts = ev.timestamp();
        if (ts != Long.MIN_VALUE) {
            // the event itself (a batch's too, at its flush time) was written as it happened
            if (ts > lane.eventTs) lane.eventTs = ts;
            if (ts > frontier) frontier = ts;
        }
    }

    /** Processor {@code cpu}'s buffer has been taken whole. */
    void endBuffer(int cpu) {
        lateness.endBuffer(cpu);
    }

    /** The session has ended: each processor's last switch keeps an unknown new thread. */
    void endOfSession() {
        for (int cpu = 0; cpu < lanes.count(); cpu++) {
            ProcessorLanes.Lane lane = lanes.get(cpu);
            if (!lane.pending) continue;
            int src = MergeQueue.packets(cpu);
            queue.markComplete(src, queue.tailPosition(src));
            lane.pending = false;
            counters.lastSwitchWithoutNewThread++;
        }
    }

    private void onCSwitch(TraceEvent ev, ProcessorLanes.Lane lane) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        CSwitchEvent.check(ev.payloadLength());
        counters.cswitchEvents++;
        sawCSwitch = true;
        resolvePending(lane, CSwitchEvent.oldThreadId(d, p));
        int src = MergeQueue.cswitches(lane.cpu);
        int q = enqueueSwitch(src, ev.timestamp(), true);
        MergeQueue m = queue;
        int state = CSwitchEvent.oldThreadState(d, p);
        m.oldTid[src][q] = CSwitchEvent.oldThreadId(d, p);
        m.oldPriority[src][q] = CSwitchEvent.oldThreadPriority(d, p);
        m.oldState[src][q] = state;
        m.oldWaitReason[src][q] = state == KernelEnums.STATE_WAITING ? CSwitchEvent.oldThreadWaitReason(d, p) : -1;
        m.oldWaitMode[src][q] = CSwitchEvent.waitMode(d, p);
        m.newTid[src][q] = CSwitchEvent.newThreadId(d, p);
        m.newPriority[src][q] = CSwitchEvent.newThreadPriority(d, p);
        m.newWaitTicks[src][q] = CSwitchEvent.newThreadWaitTime(d, p);
        m.detail[src][q] = MergeQueue.packDetail(CSwitchEvent.previousCStateOrRank(d, p), CSwitchEvent.newThreadPriorityDecrement(d, p),
                CSwitchEvent.oldThreadIdealProcessor(d, p));
        m.remainingQuantum[src][q] = CSwitchEvent.oldThreadRemainingQuantum(d, p);
        if (ev.pmcCount() > 0) {
            long[] c = new long[ev.pmcCount()];
            for (int i = 0; i < c.length; i++) c[i] = ev.pmcCounter(i);
            m.pmc[src][q] = c;
        }
    }

    private void onPacket(int kind, long ts, int oldTid, int oldPriority, int oldState, int oldWaitReason, int newWaitTime,
                          int tableIndex) {
        switch (kind) {
            case CompactBatchDecoder.IDLE_SHORT, CompactBatchDecoder.IDLE -> counters.idlePackets++;
            case CompactBatchDecoder.LITE -> counters.litePackets++;
            default -> counters.fullPackets++;
        }
        if (tableIndex >= 0 && oldTid == 0) counters.emptyTidTableSlot++;
        ProcessorLanes.Lane lane = compactLane;
        resolvePending(lane, oldTid);
        int src = MergeQueue.packets(lane.cpu);
        int q = enqueueSwitch(src, ts, false);
        MergeQueue m = queue;
        m.oldTid[src][q] = oldTid;
        m.oldPriority[src][q] = oldPriority;
        m.oldState[src][q] = oldState;
        m.oldWaitReason[src][q] = oldWaitReason;
        m.oldWaitMode[src][q] = -1;
        m.newTid[src][q] = -1;
        m.newPriority[src][q] = -1;
        m.newWaitTicks[src][q] = newWaitTime;
        m.detail[src][q] = MergeQueue.NO_DETAIL;
        lane.pending = true;
        if (ts > lane.packetTs) lane.packetTs = ts;
    }

    /** The new thread of a processor's waiting switch is the old thread of its next switch. */
    private void resolvePending(ProcessorLanes.Lane lane, int oldTid) {
        if (!lane.pending) return;
        int src = MergeQueue.packets(lane.cpu);
        int p = queue.tailPosition(src);
        queue.newTid[src][p] = oldTid;
        queue.markComplete(src, p);
        lane.pending = false;
    }

    /** Queues a switch at time {@code t} on source {@code src}; returns its position for the caller to fill. */
    private int enqueueSwitch(int src, long t, boolean complete) {
        int p = queue.push(src, t, nextSeq(), MergeQueue.KIND_SWITCH, complete);
        notePeak();
        return p;
    }

    private long nextSeq() {
        return seq++;
    }

    private void notePeak() {
        if (queue.size() > counters.peakQueued) counters.peakQueued = queue.size();
    }
}
