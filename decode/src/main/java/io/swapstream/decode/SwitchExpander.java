package io.swapstream.decode;

import io.swapstream.schemas.etw.SessionClock;
import io.swapstream.schemas.etw.TraceEvent;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Expands one session's CSwitch events and compact batches into {@link ContextSwitch} records
 * (ETW-FORMATS.md §5, DESIGN.md "Expansion"). Events arrive in buffer order, which is per
 * processor time order but not global order; each processor keeps a lane whose last compact switch
 * waits for the next switch on that processor to learn its new thread. Lanes are merged by
 * (timestamp, cpu) like an ETW consumer does, and derived times are computed in merged order.
 */
public final class SwitchExpander {
    /** Beyond this many queued items the merge stops waiting for silent processors. */
    public static final int DEFAULT_MAX_QUEUED = 1 << 20;

    private final String session;
    private final String host;
    private final SessionClock clock;
    private final int maximumWaitReason;
    private final Consumer<ContextSwitch> out;
    private final Consumer<ThreadInfo> threadsOut;
    private final ThreadDirectory directory;
    private final ExpansionCounters counters = new ExpansionCounters();
    private final int maxQueued;
    private Lane[] lanes;
    private int queued;
    private long lastEmittedTs = Long.MIN_VALUE;
    private final Map<Integer, Long> lastSwitchOutNanos = new HashMap<>();
    private Lane compactLane;

    /** One queued item: a switch (possibly waiting for its new thread) or a thread/process event. */
    private static final class Item {
        long ts;
        boolean complete;
        // switch fields
        boolean isSwitch;
        String source;
        int oldTid;
        int oldPriority = -1;
        int oldState = -1;
        int oldWaitReason = -1;
        int oldWaitMode = -1;
        int newTid = -1;
        int newPriority = -1;
        long newWaitTicks = -1;
        long[] pmc;
        // thread/process event
        ThreadEvent thread;
        ProcessEvent process;
    }

    private static final class Lane {
        final int cpu;
        final ArrayDeque<Item> queue = new ArrayDeque<>();
        long lastTs = Long.MIN_VALUE;
        Item pending;
        // merged-order state: the thread on this processor and when it came on
        int currentTid = -1;
        long currentSinceNanos;

        Lane(int cpu) {
            this.cpu = cpu;
        }
    }

    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          Consumer<ContextSwitch> out, Consumer<ThreadInfo> threadsOut) {
        this(session, host, clock, maximumWaitReason, processors, out, threadsOut, DEFAULT_MAX_QUEUED);
    }

    public SwitchExpander(String session, String host, SessionClock clock, int maximumWaitReason, int processors,
                          Consumer<ContextSwitch> out, Consumer<ThreadInfo> threadsOut, int maxQueued) {
        this.session = session;
        this.host = host;
        this.clock = clock;
        this.maximumWaitReason = maximumWaitReason;
        this.out = out;
        this.threadsOut = threadsOut;
        this.directory = new ThreadDirectory(session);
        this.maxQueued = maxQueued;
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
        if (hook == ContextSwap.HOOK_ID) {
            onCSwitch(ev);
        } else if (hook == CompactBatchDecoder.HOOK_ID) {
            onCompactBatch(ev);
        } else if (hook >= 0 && ev.headerType().isSystem()) {
            if (ThreadEvent.handles(hook)) {
                counters.threadEvents++;
                Item it = new Item();
                it.thread = ThreadEvent.decode(ev);
                append(lane(ev.processor()), it, ev.timestamp(), true);
            } else if (ProcessEvent.handles(hook)) {
                counters.processEvents++;
                Item it = new Item();
                it.process = ProcessEvent.decode(ev);
                append(lane(ev.processor()), it, ev.timestamp(), true);
            }
        }
    }

    private void onCSwitch(TraceEvent ev) {
        ByteBuffer d = ev.data();
        int p = ev.payloadOffset();
        ContextSwap.check(ev.payloadLength());
        counters.cswitchEvents++;
        Item it = new Item();
        it.isSwitch = true;
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
        Lane lane = lane(ev.processor());
        resolvePending(lane, it.oldTid);
        append(lane, it, ev.timestamp(), true);
    }

    private void onCompactBatch(TraceEvent ev) {
        counters.compactBatches++;
        compactLane = lane(ev.processor());
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
        Item it = new Item();
        it.isSwitch = true;
        it.source = ContextSwitch.COMPACT;
        it.oldTid = oldTid;
        it.oldPriority = oldPriority;
        it.oldState = oldState;
        it.oldWaitReason = oldWaitReason;
        it.newWaitTicks = newWaitTime;
        Lane lane = compactLane;
        resolvePending(lane, oldTid);
        lane.pending = it;
        append(lane, it, ts, false);
    }

    /** The new thread of a processor's waiting switch is the old thread of its next switch. */
    private void resolvePending(Lane lane, int oldTid) {
        Item p = lane.pending;
        if (p != null) {
            p.newTid = oldTid;
            p.complete = true;
            lane.pending = null;
        }
    }

    private void append(Lane lane, Item it, long ts, boolean complete) {
        it.ts = ts;
        it.complete = it.complete || complete;
        if (ts > lane.lastTs) lane.lastTs = ts;
        lane.queue.addLast(it);
        queued++;
        drain(false);
    }

    /** Ends the session: the last switch of each processor keeps an unknown new thread. */
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
        while (queued > 0) {
            Lane best = null;
            Item head = null;
            for (Lane l : lanes) {
                Item h = l.queue.peekFirst();
                if (h != null && (head == null || h.ts < head.ts || (h.ts == head.ts && l.cpu < best.cpu))) {
                    best = l;
                    head = h;
                }
            }
            if (!all && queued <= maxQueued && !mayEmit(best, head)) return;
            best.queue.pollFirst();
            queued--;
            if (!head.complete) {
                // forced out by the memory bound before its next switch arrived
                head.complete = true;
                if (best.pending == head) best.pending = null;
            }
            emit(best, head);
        }
    }

    private boolean mayEmit(Lane best, Item head) {
        if (!head.complete) return false;
        for (Lane l : lanes) {
            if (l == best || !l.queue.isEmpty()) continue;
            // an empty lane may still produce something earlier (or a tie on a lower cpu)
            if (l.lastTs < head.ts || (l.lastTs == head.ts && l.cpu < best.cpu)) return false;
        }
        return true;
    }

    private void emit(Lane lane, Item it) {
        if (it.ts < lastEmittedTs) counters.emittedOutOfOrder++;
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
        } else if (lane.currentTid == it.oldTid && !oldIdle) {
            runNanos = nanos - lane.currentSinceNanos;
        }
        if (!oldIdle) {
            if (it.oldState == KernelEnums.STATE_TERMINATED) lastSwitchOutNanos.remove(it.oldTid);
            else lastSwitchOutNanos.put(it.oldTid, nanos);
        }
        Integer newTid = it.newTid >= 0 ? it.newTid : null;
        boolean newIdle = newTid != null && newTid == 0;
        Long sinceLast = null;
        if (newTid != null && !newIdle) {
            Long out = lastSwitchOutNanos.get(newTid);
            if (out != null) sinceLast = nanos - out;
        }
        lane.currentTid = newTid != null ? newTid : -1;
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
                cswitch && !newIdle ? (Integer) it.newPriority : null,
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
