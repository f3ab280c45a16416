package io.swapstream.generate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the simulated scheduler decided, and what each switch must therefore decode to: the
 * decisions in time order with their derived times worked out directly (docs/architecture.md "Expansion"),
 * independently of how the trace is written or merged. Pass it to
 * {@link TraceGenerator#generate(java.nio.file.Path, GeneratorOptions, int, ScheduleSink)}.
 */
public final class ScheduleRecorder implements ScheduleSink {
    static final int THREAD_END = 0x0502;
    static final int STATE_TERMINATED = 4;

    /**
     * One switch as decided. Times are raw 10 MHz ticks; {@code newThreadTimeSinceLast} and
     * {@code oldThreadRun} are in ticks, null when docs/architecture.md "Expansion" says they are not known.
     */
    public record Switch(int cpu, long ts, int oldTid, int newTid, int oldPriority, int newPriority, int oldState,
                         int oldWaitReason, int newWaitTicks, Long newThreadTimeSinceLast, Long oldThreadRun,
                         Long newThreadReady, Long newThreadWaits, Integer readier, SwitchDetail detail, int newPid,
                         int readierPid, boolean endsWait) {}

    /**
     * A decision: a switch, a thread's end, or a wake-up with the thread that did it as the
     * simulator knew it (0: a DPC or idle); rank 0 at equal times before switches, as the merge orders.
     */
    private record Decision(long ts, int rank, int cpu, long seq, Switch sw, int endedTid, int readiedTid, int readier, int startedTid,
                            int startedPid) {
        Decision(long ts, int rank, int cpu, long seq, Switch sw, int endedTid, int readiedTid, int readier) {
            this(ts, rank, cpu, seq, sw, endedTid, readiedTid, readier, -1, 0);
        }
    }

    static final int STATE_WAITING = 5;
    static final int STATE_TRANSITION = 6;
    static final int STATE_WAITING_FOR_PROCESS_IN_SWAP = 9;

    private final List<Decision> decisions = new ArrayList<>();

    @Override
    public void onSwitch(int cpu, long ts, int newTid, int oldTid, int newPriority, int oldPriority, int oldBasePriority,
                         int oldState, int oldWaitReason, boolean oldUserMode, int newWaitTicks, long[] pmc, SwitchDetail detail) {
        decisions.add(new Decision(ts, 1, cpu, decisions.size(),
                new Switch(cpu, ts, oldTid, newTid, oldPriority, newPriority, oldState, oldWaitReason, newWaitTicks, null, null,
                        null, null, null, detail, 0, 0, false), -1, -1, 0));
    }

    @Override
    public void onThread(int cpu, long ts, int hookId, int pid, int tid, int basePriority) {
        if (hookId == THREAD_END) decisions.add(new Decision(ts, 0, cpu, decisions.size(), null, tid, -1, 0));
        else decisions.add(new Decision(ts, 0, cpu, decisions.size(), null, -1, -1, 0, tid, pid));
    }

    @Override
    public void onReady(int cpu, long ts, int tid, int readier, int adjustReason, int adjustIncrement, int flags) {
        decisions.add(new Decision(ts, 0, cpu, decisions.size(), null, -1, tid, readier));
    }

    /** Every switch in time order (then processor), with its derived times. */
    public List<Switch> inTimeOrder() {
        List<Decision> sorted = new ArrayList<>(decisions);
        sorted.sort(Comparator.comparingLong(Decision::ts).thenComparingInt(Decision::rank)
                .thenComparingInt(Decision::cpu).thenComparingLong(Decision::seq));
        Map<Integer, Long> lastOut = new HashMap<>();
        Map<Integer, int[]> current = new HashMap<>();
        Map<Integer, Long> since = new HashMap<>();
        // docs/architecture.md "Ready time": since its last switch-out, a thread's first wake-up, else that
        // switch-out when it left runnable; the readier as the simulator knew it (null: preempted, DPC, idle)
        Map<Integer, Long> readyAt = new HashMap<>();
        Map<Integer, Integer> readiedBy = new HashMap<>();
        java.util.Set<Integer> readyFromSwitchOut = new java.util.HashSet<>();
        // each thread's process as its start (or rundown) said; the readier's process when it readied; who left waiting
        Map<Integer, Integer> pidOf = new HashMap<>();
        Map<Integer, Integer> readierPidOf = new HashMap<>();
        java.util.Set<Integer> waiting = new java.util.HashSet<>();
        List<Switch> out = new ArrayList<>();
        for (Decision d : sorted) {
            if (d.startedTid() >= 0) {
                pidOf.put(d.startedTid(), d.startedPid());
                continue;
            }
            if (d.readiedTid() >= 0) {
                int tid = d.readiedTid();
                if (!readyAt.containsKey(tid) || readyFromSwitchOut.contains(tid)) {
                    readyAt.put(tid, d.ts());
                    readyFromSwitchOut.remove(tid);
                    if (d.readier() != 0) {
                        readiedBy.put(tid, d.readier());
                        readierPidOf.put(tid, pidOf.getOrDefault(d.readier(), 0));
                    } else {
                        readiedBy.remove(tid);
                    }
                }
                continue;
            }
            if (d.sw() == null) {
                lastOut.remove(d.endedTid());
                readyAt.remove(d.endedTid());
                readiedBy.remove(d.endedTid());
                readyFromSwitchOut.remove(d.endedTid());
                continue;
            }
            Switch s = d.sw();
            Long run = null;
            int[] on = current.get(s.cpu());
            if (s.oldTid() != 0 && on != null && on[0] == s.oldTid()) run = s.ts() - since.get(s.cpu());
            if (s.oldTid() != 0) {
                if (s.oldState() == STATE_TERMINATED) lastOut.remove(s.oldTid());
                else lastOut.put(s.oldTid(), s.ts());
                readyAt.remove(s.oldTid());
                readiedBy.remove(s.oldTid());
                readyFromSwitchOut.remove(s.oldTid());
                int st = s.oldState();
                if (st == STATE_WAITING || st == STATE_TRANSITION || st == STATE_WAITING_FOR_PROCESS_IN_SWAP) waiting.add(s.oldTid());
                else waiting.remove(s.oldTid());
                if (st != STATE_WAITING && st != STATE_TRANSITION && st != STATE_WAITING_FOR_PROCESS_IN_SWAP && st != STATE_TERMINATED) {
                    readyAt.put(s.oldTid(), s.ts());
                    readyFromSwitchOut.add(s.oldTid());
                }
            }
            Long sinceLast = null;
            if (s.newTid() != 0 && lastOut.containsKey(s.newTid())) sinceLast = s.ts() - lastOut.get(s.newTid());
            Long ready = null;
            Long waits = null;
            Integer readier = null;
            int readierPid = 0;
            boolean endsWait = s.newTid() != 0 && lastOut.containsKey(s.newTid()) && waiting.contains(s.newTid());
            if (s.newTid() != 0 && readyAt.containsKey(s.newTid())) {
                long at = readyAt.remove(s.newTid());
                ready = s.ts() - at;
                if (lastOut.containsKey(s.newTid())) waits = at - lastOut.get(s.newTid());
                readier = readyFromSwitchOut.remove(s.newTid()) ? null : readiedBy.get(s.newTid());
                if (readier != null) readierPid = readierPidOf.getOrDefault(s.newTid(), 0);
                readiedBy.remove(s.newTid());
            }
            current.put(s.cpu(), new int[] {s.newTid()});
            since.put(s.cpu(), s.ts());
            out.add(new Switch(s.cpu(), s.ts(), s.oldTid(), s.newTid(), s.oldPriority(), s.newPriority(), s.oldState(),
                    s.oldWaitReason(), s.newWaitTicks(), sinceLast, run, ready, waits, readier, s.detail(),
                    pidOf.getOrDefault(s.newTid(), 0), readierPid, endsWait));
        }
        return out;
    }
}
