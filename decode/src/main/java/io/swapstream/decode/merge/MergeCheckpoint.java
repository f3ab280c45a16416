package io.swapstream.decode.merge;

import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.etw.BufferLateness;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;

/**
 * The merge's whole state as bytes, inside a decoder checkpoint: the lanes, every queued item, each
 * live thread's times, the thread directory, the counters. Times of queued items are written relative
 * to the frontier and small numbers as varints, which keeps a checkpoint of a merge holding a quiet
 * processor's minutes short.
 */
final class MergeCheckpoint {
    private static final int ITEM_SWITCH = 0;
    private static final int ITEM_THREAD = 1;
    private static final int ITEM_PROCESS = 2;
    private static final int ITEM_READY = 3;

    private final ProcessorLanes lanes;
    private final MergeQueue queue;
    private final MergeIntake intake;
    private final ReleasePolicy policy;
    private final SwitchEmitter emitter;
    private final ExpansionCounters counters;

    MergeCheckpoint(ProcessorLanes lanes, MergeQueue queue, MergeIntake intake, ReleasePolicy policy, SwitchEmitter emitter,
                    ExpansionCounters counters) {
        this.lanes = lanes;
        this.queue = queue;
        this.intake = intake;
        this.policy = policy;
        this.emitter = emitter;
        this.counters = counters;
    }

    /** Writes the merge; its rows must have been handed over. */
    void write(StateWriter o) {
        if (emitter.hasRows()) throw new IllegalStateException("flush the rows before a checkpoint");
        o.writeInt(lanes.count());
        for (int cpu = 0; cpu < lanes.count(); cpu++) {
            ProcessorLanes.Lane l = lanes.get(cpu);
            o.writeLong(l.eventTs);
            o.writeLong(l.packetTs);
            int compact = MergeQueue.packets(cpu);
            o.writeLong(l.pending ? queue.seq[compact][queue.tailPosition(compact)] : -1);
            o.writeInt(l.currentTid);
            o.writeLong(l.currentSinceNanos);
        }
        long base = intake.frontier;
        o.writeLong(base);
        o.writeLong(intake.seq);
        o.writeLong(policy.safeBefore);
        o.writeLong(emitter.lastEmittedTs);
        o.writeBoolean(intake.sawCompact);
        o.writeBoolean(intake.sawCSwitch);
        o.writeLong(intake.lateness.max());
        o.writeInt(queue.size());
        queue.forEach((src, p) -> writeItem(o, src, p, base));
        writeTimes(o);
        writeCounters(o);
        emitter.directory.write(o);
    }

    /** Reads what {@link #write} wrote into a merge built for the same session. */
    void read(StateReader in) {
        int n = in.readInt();
        lanes.reset(n);
        long[] pendingSeq = new long[n];
        for (int i = 0; i < n; i++) {
            ProcessorLanes.Lane l = lanes.get(i);
            l.eventTs = in.readLong();
            l.packetTs = in.readLong();
            pendingSeq[i] = in.readLong();
            l.currentTid = in.readInt();
            l.currentSinceNanos = in.readLong();
        }
        long base = in.readLong();
        intake.frontier = base;
        intake.seq = in.readLong();
        policy.safeBefore = in.readLong();
        emitter.lastEmittedTs = in.readLong();
        intake.sawCompact = in.readBoolean();
        intake.sawCSwitch = in.readBoolean();
        intake.lateness = BufferLateness.resume(base, in.readLong());
        queue.clear();
        for (int q = in.readInt(); q > 0; q--) readItem(in, base);
        for (int i = 0; i < n; i++) {
            int compact = MergeQueue.packets(i);
            lanes.get(i).pending = pendingSeq[i] >= 0 && queue.count(compact) > 0
                    && queue.seq[compact][queue.tailPosition(compact)] == pendingSeq[i];
        }
        readTimes(in);
        readCounters(in);
        emitter.directory.read(in);
    }

    private void writeItem(StateWriter o, int src, int p, long base) {
        MergeQueue m = queue;
        int kind = m.kind(src, p);
        int item = kind == MergeQueue.KIND_SWITCH ? ITEM_SWITCH : kind == MergeQueue.KIND_READY ? ITEM_READY
                : m.label[src][p] instanceof ThreadEvent ? ITEM_THREAD : ITEM_PROCESS;
        int source = MergeQueue.isEvent(src) ? 0 : MergeQueue.switchSource(src);
        o.writeByte(item | source << 2 | (m.complete(src, p) ? 8 : 0) | (m.unnamed(src, p) ? 16 : 0));
        o.varLong(m.ts[src][p] - base);
        o.varLong(MergeQueue.cpu(src));
        o.varLong(m.seq[src][p]);
        switch (item) {
            case ITEM_SWITCH -> {
                o.varLong(m.oldTid[src][p]);
                o.varLong(m.oldPriority[src][p]);
                o.varLong(m.oldState[src][p]);
                o.varLong(m.oldWaitReason[src][p]);
                o.varLong(m.oldWaitMode[src][p]);
                o.varLong(m.newTid[src][p]);
                o.varLong(m.newPriority[src][p]);
                o.varLong(m.newWaitTicks[src][p]);
                o.varLong(m.detail[src][p]);
                o.varLong(m.remainingQuantum[src][p]);
                long[] pmc = m.pmc[src][p];
                o.writeByte(pmc == null ? 0 : pmc.length);
                if (pmc != null) for (long v : pmc) o.varLong(v);
            }
            case ITEM_READY -> {
                o.varLong(m.awakened(src, p));
                o.writeByte(m.readyFlags(src, p));
            }
            case ITEM_THREAD -> {
                ThreadEvent t = (ThreadEvent) m.label[src][p];
                o.writeInt(t.hookId());
                o.writeInt(t.processId());
                o.writeInt(t.threadId());
                o.writeInt(t.basePriority());
                o.nullableString(t.threadName());
            }
            default -> {
                ProcessEvent e = (ProcessEvent) m.label[src][p];
                o.writeInt(e.hookId());
                o.writeInt(e.processId());
                o.writeInt(e.parentId());
                o.writeInt(e.sessionId());
                o.writeInt(e.exitStatus());
                o.string(e.imageFileName());
                o.string(e.commandLine());
            }
        }
    }

    private void readItem(StateReader in, long base) {
        int f = in.readUnsignedByte();
        int item = f & 3;
        int source = (f >> 2) & 1;
        boolean complete = (f & 8) != 0;
        boolean unnamed = (f & 16) != 0;
        long t = base + in.varLong();
        int cpu = (int) in.varLong();
        long sq = in.varLong();
        MergeQueue m = queue;
        int src = MergeQueue.source(cpu, item != ITEM_SWITCH, source);
        switch (item) {
            case ITEM_SWITCH -> {
                int p = m.push(src, t, sq, MergeQueue.KIND_SWITCH, complete);
                if (unnamed) m.markUnnamed(src, p);
                m.oldTid[src][p] = (int) in.varLong();
                m.oldPriority[src][p] = (int) in.varLong();
                m.oldState[src][p] = (int) in.varLong();
                m.oldWaitReason[src][p] = (int) in.varLong();
                m.oldWaitMode[src][p] = (int) in.varLong();
                m.newTid[src][p] = (int) in.varLong();
                m.newPriority[src][p] = (int) in.varLong();
                m.newWaitTicks[src][p] = in.varLong();
                m.detail[src][p] = (int) in.varLong();
                m.remainingQuantum[src][p] = (int) in.varLong();
                int pmc = in.readUnsignedByte();
                if (pmc > 0) {
                    long[] c = new long[pmc];
                    for (int k = 0; k < pmc; k++) c[k] = in.varLong();
                    m.pmc[src][p] = c;
                }
            }
            case ITEM_READY -> m.pushReady(src, t, sq, (int) in.varLong(), in.readUnsignedByte());
            case ITEM_THREAD -> m.pushLabel(src, sq, new ThreadEvent(in.readInt(), t, in.readInt(), in.readInt(), in.readInt(),
                    in.nullableString()));
            default -> m.pushLabel(src, sq, new ProcessEvent(in.readInt(), t, in.readInt(), in.readInt(), in.readInt(), in.readInt(),
                    in.string(), in.string()));
        }
    }

    /** Each live thread's last switch-out and ready state. */
    private void writeTimes(StateWriter o) {
        ThreadTimes times = emitter.times;
        int live = 0;
        for (int k = 0; k < times.capacityUsed(); k++) if (times.live(k)) live++;
        o.writeInt(live);
        for (int k = 0; k < times.capacityUsed(); k++) {
            if (!times.live(k)) continue;
            o.writeInt(times.tid[k]);
            o.writeLong(times.lastOut[k]);
            o.writeLong(times.readyAt[k]);
            o.writeInt(times.readier[k]);
            o.writeInt(times.readierProcess[k]);
        }
    }

    private void readTimes(StateReader in) {
        ThreadTimes times = emitter.times;
        times.clear();
        for (int k = in.readInt(); k > 0; k--) {
            int slot = times.slotOrNew(in.readInt());
            times.lastOut[slot] = in.readLong();
            times.readyAt[slot] = in.readLong();
            times.readier[slot] = in.readInt();
            times.readierProcess[slot] = in.readInt();
        }
    }

    private void writeCounters(StateWriter o) {
        var values = counters.toMap().values();
        o.writeInt(values.size());
        for (long v : values) o.varLong(v);
    }

    private void readCounters(StateReader in) {
        long[] v = new long[in.readInt()];
        for (int i = 0; i < v.length; i++) v[i] = in.varLong();
        counters.set(v);
    }
}
