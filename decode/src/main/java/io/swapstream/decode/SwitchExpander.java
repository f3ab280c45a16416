package io.swapstream.decode;

import io.swapstream.schemas.etw.LoggerTiming;
import io.swapstream.schemas.etw.SessionClock;
import io.swapstream.schemas.etw.TraceEvent;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * Expands one session's CSwitch events and compact batches into {@link ContextSwitch} records
 * (ETW-FORMATS.md §5, DESIGN.md "Expansion") and merges the processors into time order.
 *
 * <p>Events arrive in buffer order, which is not time order even on one processor: a compact batch
 * is written when it is flushed, after events the processor logged while it was open. So every
 * switch and thread/process event waits in one queue ordered by its own time, and leaves it only
 * once no processor can still produce anything earlier. What a processor can still produce is
 * known from what the logger guarantees ({@link LoggerTiming}): its other events come in time order,
 * its packets come in time order, and nothing reaches the trace later than
 * {@link LoggerTiming#maxWriteDelayTicks} after it happened, which bounds the wait for processors
 * that log nothing. A compact switch also waits for the next switch on its processor, whose old
 * thread is its new thread.
 */
public final class SwitchExpander {
    /** Beyond this many queued items the merge stops waiting, whatever the processors may still write. */
    public static final int DEFAULT_MAX_QUEUED = 1 << 20;

    /** At equal times, events (thread, process) come before switches. */
    private static final int RANK_EVENT = 0;
    private static final int RANK_SWITCH = 1;
    /** Lane.currentTid: a thread came on but its switch was emitted before its id was known. */
    private static final int UNNAMED_THREAD = -2;

    private static final Comparator<Item> TIME_ORDER = (a, b) -> {
        if (a.ts != b.ts) return Long.compare(a.ts, b.ts);
        if (a.rank != b.rank) return Integer.compare(a.rank, b.rank);
        if (a.cpu != b.cpu) return Integer.compare(a.cpu, b.cpu);
        return Long.compare(a.seq, b.seq);
    };

    private final String session;
    private final String host;
    private final SessionClock clock;
    private final int maximumWaitReason;
    private final Consumer<ContextSwitch> out;
    private final Consumer<ThreadInfo> threadsOut;
    private final ThreadDirectory directory;
    private final ExpansionCounters counters = new ExpansionCounters();
    private final int maxQueued;
    private long maxWriteDelay;
    private final PriorityQueue<Item> queue = new PriorityQueue<>(TIME_ORDER);
    private final ArrayDeque<Item> free = new ArrayDeque<>();
    private final Map<Integer, Long> lastSwitchOutNanos = new HashMap<>();
    private Lane[] lanes;
    private long seq;
    /** The latest time any processor has logged. */
    private long frontier = Long.MIN_VALUE;
    /** Items before this time may leave the queue; only grows, as every bound it comes from. */
    private long safeBefore = Long.MIN_VALUE;
    private long lastEmittedTs = Long.MIN_VALUE;
    private boolean sawCompact;
    private boolean sawCSwitch;
    private Lane compactLane;

    /** One queued item: a switch (a compact one possibly waiting for its new thread) or a thread/process event. */
    private static final class Item {
        long ts;
        int rank;
        int cpu;
        long seq;
        boolean complete;
        boolean newThreadUnnamed;
        String source;
        int oldTid;
        int oldPriority;
        int oldState;
        int oldWaitReason;
        int oldWaitMode;
        int newTid;
        int newPriority;
        long newWaitTicks;
        long[] pmc;
        ThreadEvent thread;
        ProcessEvent process;

        void clear() {
            complete = false;
            newThreadUnnamed = false;
            source = null;
            oldTid = 0;
            oldPriority = -1;
            oldState = -1;
            oldWaitReason = -1;
            oldWaitMode = -1;
            newTid = -1;
            newPriority = -1;
            newWaitTicks = -1;
            pmc = null;
            thread = null;
            process = null;
        }
    }

    private static final class Lane {
        final int cpu;
        /** The latest time of an event written as it happened (anything but batch packets). */
        long eventTs = Long.MIN_VALUE;
        /** The latest compact packet time. */
        long packetTs = Long.MIN_VALUE;
        /** The last compact switch, waiting for the next one to name its new thread. */
        Item pending;
        // merged-order state: the thread on this processor and when it came on
        int currentTid = -1;
        long currentSinceNanos;

        Lane(int cpu) {
            this.cpu = cpu;
        }
    }

    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          long maxWriteDelay, Consumer<ContextSwitch> out, Consumer<ThreadInfo> threadsOut) {
        this(session, host, clock, maximumWaitReason, processors, maxWriteDelay, out, threadsOut, DEFAULT_MAX_QUEUED);
    }

    /**
     * @param maxWriteDelay session clock ticks within which the logger writes every event
     *                      ({@link LoggerTiming#maxWriteDelayTicks}); {@link Long#MAX_VALUE} waits
     *                      for silent processors until the end of the session
     */
    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          long maxWriteDelay, Consumer<ContextSwitch> out, Consumer<ThreadInfo> threadsOut, int maxQueued) {
        this.session = session;
        this.host = host;
        this.clock = clock;
        this.maximumWaitReason = maximumWaitReason;
        this.out = out;
        this.threadsOut = threadsOut;
        this.directory = new ThreadDirectory(session);
        this.maxQueued = maxQueued;
        this.maxWriteDelay = maxWriteDelay;
        this.lanes = new Lane[Math.max(1, processors)];
        for (int i = 0; i < lanes.length; i++) lanes[i] = new Lane(i);
    }

    public ExpansionCounters counters() { return counters; }
    public ThreadDirectory directory() { return directory; }

    private Lane lane(int cpu) {
        if (cpu >= lanes.length) {
            Lane[] bigger = Arrays.copyOf(lanes, cpu + 1);
            for (int i = lanes.length; i < bigger.length; i++) bigger[i] = new Lane(i);
            lanes = bigger;
        }
        return lanes[cpu];
    }

    /**
     * Takes one event of the session, in buffer order.
     *
     * @throws MalformedEventException when a switch payload does not fit its layout
     */
    public void onEvent(TraceEvent ev) {
        int hook = ev.hookId();
        Lane lane = lane(ev.processor());
        if (hook == ContextSwap.HOOK_ID) {
            onCSwitch(ev, lane);
        } else if (hook == CompactBatchDecoder.HOOK_ID) {
            onCompactBatch(ev, lane);
        } else if (hook >= 0 && ev.headerType().isSystem()) {
            if (ThreadEvent.handles(hook)) {
                counters.threadEvents++;
                Item it = item(lane, ev.timestamp(), RANK_EVENT);
                it.thread = ThreadEvent.decode(ev);
                enqueue(it, true);
            } else if (ProcessEvent.handles(hook)) {
                counters.processEvents++;
                Item it = item(lane, ev.timestamp(), RANK_EVENT);
                it.process = ProcessEvent.decode(ev);
                enqueue(it, true);
            }
        }
        long ts = ev.timestamp();
        if (ts != Long.MIN_VALUE) {
            // the event itself (a batch's too, at its flush time) was written as it happened
            if (ts > lane.eventTs) lane.eventTs = ts;
            if (ts > frontier) frontier = ts;
        }
        drain(false);
    }

    private void onCSwitch(TraceEvent ev, Lane lane) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        ContextSwap.check(ev.payloadLength());
        counters.cswitchEvents++;
        sawCSwitch = true;
        Item it = item(lane, ev.timestamp(), RANK_SWITCH);
        it.source = ContextSwitch.CSWITCH;
        it.oldTid = ContextSwap.oldThreadId(d, p);
        it.oldPriority = ContextSwap.oldThreadPriority(d, p);
        it.oldState = ContextSwap.oldThreadState(d, p);
        it.oldWaitReason = it.oldState == KernelEnums.STATE_WAITING ? ContextSwap.oldThreadWaitReason(d, p) : -1;
        it.oldWaitMode = ContextSwap.waitMode(d, p);
        it.newTid = ContextSwap.newThreadId(d, p);
        it.newPriority = ContextSwap.newThreadPriority(d, p);
        it.newWaitTicks = ContextSwap.newThreadWaitTime(d, p);
        if (ev.pmcCount() > 0) {
            it.pmc = new long[ev.pmcCount()];
            for (int i = 0; i < it.pmc.length; i++) it.pmc[i] = ev.pmcCounter(i);
        }
        resolvePending(lane, it.oldTid);
        enqueue(it, true);
    }

    private void onCompactBatch(TraceEvent ev, Lane lane) {
        counters.compactBatches++;
        sawCompact = true;
        compactLane = lane;
        CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), maximumWaitReason, this::onPacket);
    }

    private void onPacket(int kind, long ts, int oldTid, int oldPriority, int oldState, int oldWaitReason,
                          int newWaitTime, int tableIndex) {
        switch (kind) {
            case CompactBatchDecoder.IDLE_SHORT, CompactBatchDecoder.IDLE -> counters.idlePackets++;
            case CompactBatchDecoder.LITE -> counters.litePackets++;
            default -> counters.fullPackets++;
        }
        if (tableIndex >= 0 && oldTid == 0) counters.emptyTidTableSlot++;
        Lane lane = compactLane;
        Item it = item(lane, ts, RANK_SWITCH);
        it.source = ContextSwitch.COMPACT;
        it.oldTid = oldTid;
        it.oldPriority = oldPriority;
        it.oldState = oldState;
        it.oldWaitReason = oldWaitReason;
        it.newWaitTicks = newWaitTime;
        resolvePending(lane, oldTid);
        lane.pending = it;
        if (ts > lane.packetTs) lane.packetTs = ts;
        enqueue(it, false);
    }

    /** The new thread of a processor's waiting switch is the old thread of its next switch. */
    private static void resolvePending(Lane lane, int oldTid) {
        Item p = lane.pending;
        if (p != null) {
            p.newTid = oldTid;
            p.complete = true;
            lane.pending = null;
        }
    }

    private Item item(Lane lane, long ts, int rank) {
        Item it = free.pollFirst();
        if (it == null) it = new Item();
        it.clear();
        it.ts = ts;
        it.rank = rank;
        it.cpu = lane.cpu;
        it.seq = seq++;
        return it;
    }

    private void enqueue(Item it, boolean complete) {
        it.complete = complete;
        if (it.ts < lastEmittedTs && frontier != Long.MIN_VALUE && maxWriteDelay != Long.MAX_VALUE) {
            // the logger broke the bound (a file session without a flush timer does): it is counted
            // when emitted, and the merge waits twice as long as this item was late from now on
            long late = frontier - it.ts;
            if (late > maxWriteDelay / 2) maxWriteDelay = late > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * late;
        }
        queue.add(it);
        if (queue.size() > counters.peakQueued) counters.peakQueued = queue.size();
    }

    /** Ends the session: everything left leaves in time order; each processor's last switch keeps an unknown new thread. */
    public void finish() {
        for (Lane lane : lanes) {
            if (lane.pending != null) {
                lane.pending.complete = true;
                lane.pending = null;
                counters.lastSwitchWithoutNewThread++;
            }
        }
        drain(true);
    }

    private void drain(boolean all) {
        Item head;
        while ((head = queue.peek()) != null) {
            if (!all && (head.ts >= safeBefore || !head.complete)) {
                long bound = writtenBefore();
                safeBefore = Math.max(safeBefore, safeBefore(bound));
                // an incomplete switch may leave once its processor has written nothing more within
                // the logger's bound: its next switch, which names the new thread, is later than all before it
                boolean ready = head.complete ? head.ts < safeBefore : head.ts < bound;
                if (!ready) {
                    if (queue.size() <= maxQueued) return;
                    counters.queueLimitForced++;
                }
                if (!head.complete) forceOut(head);
            }
            queue.poll();
            emit(lanes[head.cpu], head);
            free.addLast(head);
        }
    }

    private void forceOut(Item head) {
        Lane lane = lanes[head.cpu];
        if (lane.pending == head) lane.pending = null;
        head.complete = true;
        head.newThreadUnnamed = true;
        counters.switchesBeforeNewThreadKnown++;
    }

    /** Everything any processor logged before this time is in the trace read so far. */
    private long writtenBefore() {
        if (frontier == Long.MIN_VALUE || maxWriteDelay == Long.MAX_VALUE) return Long.MIN_VALUE;
        return frontier - maxWriteDelay;
    }

    /** The earliest time any processor may still produce an item at. */
    private long safeBefore(long writtenBefore) {
        long min = Long.MAX_VALUE;
        for (Lane l : lanes) {
            long evidence;
            if (sawCompact) evidence = Math.min(l.eventTs, l.packetTs);
            else if (sawCSwitch) evidence = l.eventTs;
            else evidence = Long.MIN_VALUE; // the session's first batch may still hold older packets
            long w = Math.max(evidence, writtenBefore);
            if (w < min) min = w;
        }
        return min;
    }

    private void emit(Lane lane, Item it) {
        if (it.ts < lastEmittedTs) {
            if (it.rank == RANK_SWITCH) counters.emittedOutOfOrder++;
            else counters.lateEvents++;
        }
        lastEmittedTs = Math.max(lastEmittedTs, it.ts);
        long nanos = clock.toUnixNanos(it.ts);
        if (it.thread != null) {
            ThreadInfo info = directory.onThread(it.thread, nanos);
            if (it.thread.isEnd()) lastSwitchOutNanos.remove(it.thread.threadId());
            if (threadsOut != null) threadsOut.accept(info);
            return;
        }
        if (it.process != null) {
            directory.onProcess(it.process);
            return;
        }
        counters.switches++;
        boolean oldIdle = it.oldTid == 0;
        Long runNanos = null;
        if (lane.currentTid >= 0 && lane.currentTid != it.oldTid) {
            counters.oldThreadNotLastSwitchedIn++;
        } else if ((lane.currentTid == it.oldTid || lane.currentTid == UNNAMED_THREAD) && !oldIdle) {
            runNanos = nanos - lane.currentSinceNanos;
        }
        if (!oldIdle) {
            if (it.oldState == KernelEnums.STATE_TERMINATED) lastSwitchOutNanos.remove(it.oldTid);
            else lastSwitchOutNanos.put(it.oldTid, nanos);
        }
        Integer newTid = it.newTid >= 0 && !it.newThreadUnnamed ? it.newTid : null;
        boolean newIdle = newTid != null && newTid == 0;
        Long sinceLast = null;
        if (newTid != null && !newIdle) {
            Long outAt = lastSwitchOutNanos.get(newTid);
            if (outAt != null) sinceLast = nanos - outAt;
        }
        lane.currentTid = newTid != null ? newTid : it.newThreadUnnamed ? UNNAMED_THREAD : -1;
        lane.currentSinceNanos = nanos;
        boolean cswitch = it.source == ContextSwitch.CSWITCH;
        this.out.accept(new ContextSwitch(
                session, host, lane.cpu, it.ts, nanos, it.source,
                it.oldTid,
                oldIdle ? null : it.oldPriority,
                oldIdle ? null : KernelEnums.threadState(it.oldState),
                oldIdle || it.oldWaitReason < 0 ? null : KernelEnums.waitReason(it.oldWaitReason),
                oldIdle || !cswitch ? null : ContextSwap.WAIT_MODES[it.oldWaitMode],
                newTid,
                cswitch && !newIdle && newTid != null ? (Integer) it.newPriority : null,
                newIdle || it.newWaitTicks < 0 ? null : it.newWaitTicks,
                it.pmc == null ? null : toList(it.pmc),
                sinceLast,
                runNanos));
    }

    private static List<Long> toList(long[] v) {
        List<Long> l = new ArrayList<>(v.length);
        for (long x : v) l.add(x);
        return l;
    }
}
