package io.swapstream.generate;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * A small discrete-event model of the Windows dispatcher: threads in processes with base
 * priorities run in slices, wait for varied reasons (and get a priority boost on waking), are
 * preempted by higher-priority wakers or lose their quantum, migrate to whichever processor is
 * free, go idle, exit and have their TIDs reused. An idle processor sinks into deeper C-states the
 * longer it idles, and a thread woken onto it runs only once it has come out
 * ({@link #C_STATE_AFTER}, {@link #EXIT_LATENCY}). It drives a {@link ScheduleSink}.
 */
public final class SchedulerSimulator {
    public static final long TICKS_PER_SECOND = 10_000_000L;
    /** The interrupt timer tick: 15.625 ms, in which NewThreadWaitTime counts. */
    public static final long TIMER_TICK = 156_250L;
    static final long QUANTUM = 2 * TIMER_TICK;

    static final int STATE_READY = 1;
    static final int STATE_TERMINATED = 4;
    static final int STATE_WAITING = 5;
    static final int WR_QUANTUM_END = 30;
    static final int WR_PREEMPTED = 32;
    // KWAIT_REASONs below 0x27, valid under every MaximumWaitReason, with weights
    static final int[] REASONS = {6, 15, 0, 4, 16, 28, 37, 27, 13, 9, 29, 17};
    static final int[] REASON_WEIGHTS = {30, 20, 8, 10, 6, 5, 8, 4, 4, 2, 2, 1};
    static final int[] BASE_PRIORITIES = {8, 8, 8, 9, 10, 6, 13, 15, 4, 24};
    /** Idle this long (ticks), a processor is in C-state 1, 2 or 3 (PreviousCState); C1 from the start. */
    static final long[] C_STATE_AFTER = {0, 0, 500, 10_000};
    /** Coming out of C-state k takes EXIT_LATENCY[k] ticks and up to half that again: 1, 20 and 60 µs. */
    static final long[] EXIT_LATENCY = {0, 10, 200, 600};
    /** Cycles a tick, at 3 GHz: the quantum's unit (OldThreadRemainingQuantum counts 1,024 cycles). */
    static final long CYCLES_PER_TICK = 300;

    final GeneratorOptions o;
    final Random rnd;
    /** Who readies whom: a stream of its own, so the schedule itself is the same with or without ReadyThread events. */
    final Random readyRnd;
    /** When each processor last switched: a ReadyThread event at that same time would be ambiguous about its readier. */
    final long[] switchedAt;
    /** Exit latencies: a stream of its own, so the wake-ups' jitter moves no other decision. */
    final Random idleRnd;
    /** When each processor went idle. */
    final long[] idleSince;
    /** The thread each processor is waking up for, while it comes out of its C-state. */
    final SimThread[] waking;
    /** The C-state each processor is coming out of. */
    final int[] leavingCState;
    final ScheduleSink sink;
    final List<SimThread> threads = new ArrayList<>();
    final ArrayDeque<Integer> freeTids = new ArrayDeque<>();
    final SimThread[] running;
    final long[] sliceStart;
    final long[] lastSwitch;
    final long[] onSince;
    final long[][] pmc;
    final PriorityQueue<long[]> events = new PriorityQueue<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    final List<ArrayDeque<SimThread>> ready = new ArrayList<>();
    final int active;
    long seq;
    long now;
    long start;
    long endTime;
    long switches;
    int nextTid = 1000;

    static final class SimThread {
        int tid;
        int pid;
        int base;
        int priority;
        long lastOut = -1;
        int lastCpu;
        boolean alive = true;
        long burstLeft;
        long generation;
        boolean io;
        int index;
        int idealCpu;
        int rank;
    }

    // event kinds
    static final long WAKE = 0;
    static final long SLICE_END = 1;
    static final long FLUSH = 2;
    static final long SPAWN = 3;
    static final long IDLE_EXIT = 4;

    public SchedulerSimulator(GeneratorOptions o, ScheduleSink sink) {
        this.o = o;
        this.rnd = new Random(o.seed());
        this.readyRnd = new Random(o.seed() * 0x9E3779B97F4A7C15L + 0x532);
        this.switchedAt = new long[o.processors()];
        java.util.Arrays.fill(switchedAt, Long.MIN_VALUE);
        this.idleRnd = new Random(o.seed() * 0x2545F4914F6CDD1DL + 0x1d1e);
        this.idleSince = new long[o.processors()];
        this.waking = new SimThread[o.processors()];
        this.leavingCState = new int[o.processors()];
        this.sink = sink;
        this.active = o.activeCpus();
        this.running = new SimThread[o.processors()];
        this.sliceStart = new long[o.processors()];
        this.lastSwitch = new long[o.processors()];
        this.onSince = new long[o.processors()];
        this.pmc = o.pmcCounters() > 0 ? new long[o.processors()][o.pmcCounters()] : null;
        for (int i = 0; i < 32; i++) ready.add(new ArrayDeque<>());
    }

    /** Runs until about {@code o.switches()} switches; returns the number made. */
    public long run(long startTicks) {
        now = startTicks;
        start = startTicks;
        java.util.Arrays.fill(idleSince, startTicks);
        for (int p = 0; p < o.processes(); p++) {
            int pid = 400 + 4 * p;
            int cpu = p % active;
            if (o.rundown()) {
                sink.onProcess(cpu, now, 0x0303, pid, 4, "app" + p + ".exe", "C:\\apps\\app" + p + ".exe --serve");
            }
            for (int t = 0; t < o.threadsPerProcess(); t++) {
                SimThread th = newThread(pid, 0x0503, cpu);
                if (o.rundown() && t == 0) sink.onThreadName(cpu, now, pid, th.tid, "main");
                if (o.rundown() && t == 1) sink.onThreadName(cpu, now, pid, th.tid, "worker-io");
                schedule(now + 1 + rnd.nextInt(5000), WAKE, threads.size() - 1);
            }
        }
        // the flush timer only writes, it decides nothing: the schedule is the same with or without one
        long flushTimer = o.flushTimerTicks();
        if (flushTimer > 0) schedule(now + flushTimer, FLUSH, 0);
        while (switches < o.switches() && !events.isEmpty()) {
            long[] e = events.poll();
            now = e[0];
            int kind = (int) e[2];
            int arg = (int) e[3];
            switch (kind) {
                case (int) WAKE -> wake(threads.get(arg), e[4]);
                case (int) SLICE_END -> sliceEnd(arg, e[4]);
                case (int) IDLE_EXIT -> idleExit(arg);
                case (int) FLUSH -> {
                    sink.onFlushTimer(now);
                    schedule(now + flushTimer, FLUSH, 0);
                }
                default -> spawn(arg);
            }
        }
        endTime = now + 1;
        if (o.rundown()) {
            for (SimThread t : threads) if (t.alive) sink.onThread(t.lastCpu, endTime, 0x0504, t.pid, t.tid, t.base);
            for (int p = 0; p < o.processes(); p++) {
                sink.onProcess(p % active, endTime, 0x0304, 400 + 4 * p, 4, "app" + p + ".exe", "C:\\apps\\app" + p + ".exe --serve");
            }
        }
        return switches;
    }

    /** When the session stopped: after the last switch and the rundown. */
    public long endTime() { return endTime; }

    /** Whether {@code cpu} may take work now: not a silent processor, not in its quiet spell. */
    private boolean usable(int cpu) {
        return cpu < active && (o.quiet() == null || !o.quiet().covers(cpu, now - start));
    }

    private SimThread newThread(int pid, int hook, int cpu) {
        SimThread t = new SimThread();
        t.tid = freeTids.isEmpty() || rnd.nextInt(4) == 0 ? (nextTid += 4) : freeTids.poll();
        t.pid = pid;
        t.base = BASE_PRIORITIES[rnd.nextInt(BASE_PRIORITIES.length)];
        t.priority = t.base;
        t.io = rnd.nextInt(3) == 0;
        t.lastCpu = cpu;
        t.index = threads.size();
        t.idealCpu = t.index % active;
        // no scheduling group here: a small per-thread constant, so the field's bytes are not all zero
        t.rank = t.tid % 3 == 0 ? 1 : 0;
        threads.add(t);
        if (o.rundown()) sink.onThread(cpu, now, hook, pid, t.tid, t.base);
        return t;
    }

    private void schedule(long at, long kind, int arg) {
        schedule(at, kind, arg, 0);
    }

    private void schedule(long at, long kind, int arg, long generation) {
        events.add(new long[] {at, seq++, kind, arg, generation});
    }

    private long burst(SimThread t) {
        double mean = t.io ? 300 : 4000; // 30 µs or 400 µs at 10 MHz
        return 1 + (long) (-Math.log(1 - rnd.nextDouble()) * mean);
    }

    private void wake(SimThread t, long generation) {
        if (!t.alive || generation != t.generation) return;
        int boosted = t.base < 16 ? Math.min(15, t.base + 1 + rnd.nextInt(2)) : t.base;
        readied(t, boosted - t.priority);
        t.priority = boosted;
        t.burstLeft = burst(t);
        // prefer the thread's last processor, then any idle one
        int cpu = idle(t.lastCpu) ? t.lastCpu : -1;
        for (int c = 0; cpu < 0 && c < running.length; c++) if (idle(c)) cpu = c;
        if (cpu >= 0) {
            // the processor comes out of its C-state first: the thread is ready, not yet running
            long idled = now - idleSince[cpu];
            int cState = 1;
            while (cState + 1 < C_STATE_AFTER.length && idled >= C_STATE_AFTER[cState + 1]) cState++;
            long latency = EXIT_LATENCY[cState];
            waking[cpu] = t;
            leavingCState[cpu] = cState;
            schedule(now + latency + idleRnd.nextInt((int) latency / 2 + 1), IDLE_EXIT, cpu);
            return;
        }
        // preempt the lowest-priority running thread below the waker
        int victim = -1;
        for (int c = 0; c < running.length; c++) {
            if (running[c] == null || !usable(c)) continue;
            if (running[c].priority < t.priority && (victim < 0 || running[c].priority < running[victim].priority)) victim = c;
        }
        if (victim >= 0) {
            SimThread v = running[victim];
            v.burstLeft -= now - sliceStart[victim];
            if (v.burstLeft <= 0) v.burstLeft = 1;
            enqueue(v);
            switchTo(victim, t, STATE_READY, WR_PREEMPTED);
        } else {
            enqueue(t);
        }
    }

    /**
     * Logs the wake-up as the kernel does: a ReadyThread event on the processor of the code that
     * readied {@code t}: mostly a thread running on some processor (a lock released, an event set),
     * else a DPC (a timer, an I/O completion), here on the processor the thread last ran on.
     */
    private void readied(SimThread t, int increment) {
        int cpu = -1;
        boolean dpc = readyRnd.nextInt(4) == 0;
        if (!dpc) {
            int busy = 0;
            for (int c = 0; c < running.length; c++) if (readyFrom(c) && running[c] != null) busy++;
            if (busy == 0) {
                dpc = true;
            } else {
                int pick = readyRnd.nextInt(busy);
                for (int c = 0; cpu < 0; c++) if (readyFrom(c) && running[c] != null && pick-- == 0) cpu = c;
            }
        }
        if (dpc) {
            if (readyFrom(t.lastCpu)) cpu = t.lastCpu;
            for (int c = 0; cpu < 0 && c < running.length; c++) if (readyFrom(c)) cpu = c;
            if (cpu < 0) return; // every processor switched at this very tick: leave this wake-up unlogged
        }
        sink.onReady(cpu, now, t.tid, dpc ? 0 : running[cpu].tid, increment > 0 ? 2 : 1, increment, dpc ? 1 : 0);
    }

    /** Processor {@code cpu} runs nothing, is not waking up for a thread, and may take work. */
    private boolean idle(int cpu) {
        return running[cpu] == null && waking[cpu] == null && usable(cpu);
    }

    /** Processor {@code cpu} is out of its C-state: the thread it woke for runs. */
    private void idleExit(int cpu) {
        SimThread t = waking[cpu];
        waking[cpu] = null;
        // the processor went quiet meanwhile: it logs nothing, and the thread waits for another
        if (usable(cpu)) switchTo(cpu, t, -1, 0);
        else enqueue(t);
    }

    /** A ReadyThread event may be logged on {@code cpu} now: it runs, and did not switch at this very tick. */
    private boolean readyFrom(int cpu) {
        return usable(cpu) && switchedAt[cpu] != now;
    }

    private void enqueue(SimThread t) {
        ready.get(t.priority).addLast(t);
    }

    private SimThread dequeue(int minPriority) {
        for (int p = 31; p >= minPriority; p--) {
            if (!ready.get(p).isEmpty()) return ready.get(p).pollFirst();
        }
        return null;
    }

    private void sliceEnd(int cpu, long generation) {
        SimThread t = running[cpu];
        if (t == null || generation != lastSwitch[cpu]) return;
        long ran = now - sliceStart[cpu];
        t.burstLeft -= ran;
        if (!usable(cpu)) t.burstLeft = 0; // the processor goes quiet: its thread's slice ends here
        if (t.burstLeft > 0) {
            // quantum end: keep running unless someone of equal or higher priority is ready
            SimThread next = dequeue(t.priority);
            if (next == null) {
                sliceStart[cpu] = now;
                schedule(now + Math.min(QUANTUM, t.burstLeft), SLICE_END, cpu, lastSwitch[cpu]);
                return;
            }
            if (t.priority > t.base) t.priority--;
            enqueue(t);
            switchTo(cpu, next, STATE_READY, WR_QUANTUM_END);
            return;
        }
        // the run slice ends: wait, or exit
        int state;
        int reason;
        if (rnd.nextDouble() < o.exitRate()) {
            state = STATE_TERMINATED;
            reason = 22; // WrTerminated
        } else {
            state = STATE_WAITING;
            reason = pickReason();
        }
        SimThread next = usable(cpu) ? dequeue(0) : null;
        if (next == null) idleSince[cpu] = now;
        switchTo(cpu, next, state, reason);
        if (state == STATE_TERMINATED) {
            t.alive = false;
            if (o.rundown()) sink.onThread(cpu, now, 0x0502, t.pid, t.tid, t.base);
            freeTids.add(t.tid);
            schedule(now + 1000 + rnd.nextInt(200_000), SPAWN, t.pid);
        } else {
            t.priority = t.base;
            long mean = reason == 4 ? 150_000 : (t.io ? 20_000 : 60_000); // 2 ms to 15 ms
            long wait = 1 + (long) (-Math.log(1 - rnd.nextDouble()) * mean);
            if (rnd.nextInt(50) == 0) wait *= 20; // the long tail
            t.generation++;
            schedule(now + wait, WAKE, t.index, t.generation);
        }
    }

    private void spawn(int pid) {
        // a thread is created by code that runs: a quiet (parked) processor logs nothing
        int cpu = rnd.nextInt(active);
        for (int k = 0; k < active && !usable(cpu); k++) cpu = (cpu + 1) % active;
        SimThread t = newThread(pid, 0x0501, cpu);
        schedule(now + 1 + rnd.nextInt(1000), WAKE, threads.size() - 1, 0);
    }

    private int pickReason() {
        int total = 0;
        for (int w : REASON_WEIGHTS) total += w;
        int r = rnd.nextInt(total);
        for (int i = 0; i < REASONS.length; i++) {
            r -= REASON_WEIGHTS[i];
            if (r < 0) return REASONS[i];
        }
        return REASONS[0];
    }

    /** Switches {@code cpu} from its current thread (or idle) to {@code next} (or idle). */
    private void switchTo(int cpu, SimThread next, int oldState, int oldReason) {
        SimThread old = running[cpu];
        if (old == next) return;
        long[] counters = null;
        if (pmc != null) {
            long ran = old == null ? 0 : now - onSince[cpu];
            long[] c = pmc[cpu];
            c[0] += ran * 300; // cycles at 3 GHz
            for (int i = 1; i < c.length; i++) c[i] += ran * (50 + rnd.nextInt(500)) / i;
            counters = c.clone();
        }
        int newWaitTicks = 0;
        if (next != null && next.lastOut >= 0) newWaitTicks = (int) Math.min(Integer.MAX_VALUE, now / TIMER_TICK - next.lastOut / TIMER_TICK);
        SwitchDetail detail = new SwitchDetail(
                old == null ? leavingCState[cpu] : old.rank,
                next == null ? 0 : next.priority - next.base,
                old == null ? cpu : old.idealCpu,
                old == null ? 0 : (int) ((QUANTUM - (now - sliceStart[cpu])) * CYCLES_PER_TICK / 1024));
        sink.onSwitch(cpu, now,
                next == null ? 0 : next.tid, old == null ? 0 : old.tid,
                next == null ? 0 : next.priority, old == null ? 0 : old.priority, old == null ? 0 : old.base,
                old == null ? 2 : oldState, old == null ? 0 : oldReason, old != null && (oldReason == 6 || oldReason == 13),
                next == null ? 0 : newWaitTicks, counters, detail);
        switches++;
        if (old != null) {
            old.lastOut = now;
            old.lastCpu = cpu;
        }
        running[cpu] = next;
        switchedAt[cpu] = now;
        sliceStart[cpu] = now;
        onSince[cpu] = now;
        lastSwitch[cpu]++;
        if (next != null) {
            next.lastCpu = cpu;
            schedule(now + Math.min(QUANTUM, next.burstLeft), SLICE_END, cpu, lastSwitch[cpu]);
        }
        if (o.noise() && rnd.nextInt(8) == 0) sink.onNoise(cpu, now, rnd.nextInt(2));
    }
}
