package io.swapstream.ingest.generate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the simulated scheduler decided, and what each switch must therefore decode to: the
 * decisions in time order with their derived times worked out directly (DESIGN.md "Record fields"),
 * independently of how the trace is written or merged. Pass it to
 * {@link TraceGenerator#generate(java.nio.file.Path, GeneratorOptions, int, ScheduleSink)}.
 */
public final class ScheduleRecorder implements ScheduleSink {
    static final int THREAD_END = 0x0502;
    static final int STATE_TERMINATED = 4;

    /**
     * One switch as decided. Times are raw 10 MHz ticks; {@code newThreadTimeSinceLast} and
     * {@code oldThreadRun} are in ticks, null when DESIGN.md says they are not known.
     */
    public record Switch(int cpu, long ts, int oldTid, int newTid, int oldPriority, int newPriority, int oldState,
                         int oldWaitReason, int newWaitTicks, Long newThreadTimeSinceLast, Long oldThreadRun) {}

    /** A decision: a switch, or a thread's end (rank 0: at equal times before switches, as the merge orders). */
    private record Decision(long ts, int rank, int cpu, long seq, Switch sw, int endedTid) {}

    private final List<Decision> decisions = new ArrayList<>();

    @Override
    public void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBasePriority,
                         int oldState, int oldWaitReason, boolean oldUserMode, int newWaitTicks, long[] pmc) {
        decisions.add(new Decision(ts, 1, cpu, decisions.size(),
                new Switch(cpu, ts, oldTid, newTid, oldPriority, newPriority, oldState, oldWaitReason, newWaitTicks, null, null), -1));
    }

    @Override
    public void onThread(int cpu, long ts, int hookId, int pid, int tid, int basePriority) {
        if (hookId == THREAD_END) decisions.add(new Decision(ts, 0, cpu, decisions.size(), null, tid));
    }

    /** Every switch in time order (then processor), with its derived times. */
    public List<Switch> inTimeOrder() {
        List<Decision> sorted = new ArrayList<>(decisions);
        sorted.sort(Comparator.comparingLong(Decision::ts).thenComparingInt(Decision::rank)
                .thenComparingInt(Decision::cpu).thenComparingLong(Decision::seq));
        Map<Integer, Long> lastOut = new HashMap<>();
        Map<Integer, int[]> current = new HashMap<>();
        Map<Integer, Long> since = new HashMap<>();
        List<Switch> out = new ArrayList<>();
        for (Decision d : sorted) {
            if (d.sw() == null) {
                lastOut.remove(d.endedTid());
                continue;
            }
            Switch s = d.sw();
            Long run = null;
            int[] on = current.get(s.cpu());
            if (s.oldTid() != 0 && on != null && on[0] == s.oldTid()) run = s.ts() - since.get(s.cpu());
            if (s.oldTid() != 0) {
                if (s.oldState() == STATE_TERMINATED) lastOut.remove(s.oldTid());
                else lastOut.put(s.oldTid(), s.ts());
            }
            Long sinceLast = null;
            if (s.newTid() != 0 && lastOut.containsKey(s.newTid())) sinceLast = s.ts() - lastOut.get(s.newTid());
            current.put(s.cpu(), new int[] {s.newTid()});
            since.put(s.cpu(), s.ts());
            out.add(new Switch(s.cpu(), s.ts(), s.oldTid(), s.newTid(), s.oldPriority(), s.newPriority(), s.oldState(),
                    s.oldWaitReason(), s.newWaitTicks(), sinceLast, run));
        }
        return out;
    }
}
