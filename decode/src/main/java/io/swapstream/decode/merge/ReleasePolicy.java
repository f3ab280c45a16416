package io.swapstream.decode.merge;

/**
 * Decides when an item may leave the merge (docs/architecture.md "Merge"). An item leaves once no
 * processor can still produce anything earlier: before every processor's evidence, or in a finished
 * file before the latest time read minus the file's lateness, or in a live session with a declared
 * flush timer before twice that (CSwitch events; a quiet processor's compact batch stays open). Only a
 * live session's maximum lateness or the memory cap let an item out sooner, and each such release is counted.
 */
final class ReleasePolicy {
    private final ProcessorLanes lanes;
    private final MergeIntake intake;
    private final ExpansionCounters counters;
    private final MergeLimits limits;
    /** Beyond this many queued items the merge stops waiting, whatever the processors may still write. */
    private final int maxQueued;
    /** A live session's limit, in clock ticks; {@link Long#MAX_VALUE} for none. */
    private final long maxLatenessTicks;
    /** Twice a live session's declared flush timer, in clock ticks; {@link Long#MAX_VALUE} for none. */
    private final long flushBoundTicks;
    /** Items before this time may leave; it only grows, as every bound it comes from. */
    long safeBefore = Long.MIN_VALUE;
    /** Items before this time leave though the merge does not know them to be next (a live session's limit). */
    private long forcedBefore;
    /** The bounds of this pass are known: they come from what the trace has shown, which a pass does not change. */
    private boolean bounded;

    ReleasePolicy(ProcessorLanes lanes, MergeIntake intake, ExpansionCounters counters, MergeLimits limits, long ticksPerSecond) {
        this.lanes = lanes;
        this.intake = intake;
        this.counters = counters;
        this.limits = limits;
        this.maxQueued = limits.maxQueued();
        this.maxLatenessTicks = limits.finishedFile() ? Long.MAX_VALUE : limits.maxLatenessTicks(ticksPerSecond);
        this.flushBoundTicks = limits.finishedFile() ? Long.MAX_VALUE : limits.flushBoundTicks(ticksPerSecond);
    }

    /** A pass over the queue's heads begins. */
    void beginPass() {
        bounded = false;
    }

    /**
     * Whether the queue's head, at time {@code t}, may leave; counts it when a limit forces it out.
     *
     * @param complete false for a compact switch still waiting for its processor's next switch
     * @param queued   items in the queue
     */
    boolean mayLeave(long t, boolean complete, int queued) {
        if (complete && t < safeBefore) return true;
        if (!bounded) {
            safeBefore = Math.max(safeBefore, safeBefore(writtenBefore()));
            long frontier = intake.frontier;
            forcedBefore = maxLatenessTicks == Long.MAX_VALUE || frontier == Long.MIN_VALUE ? Long.MIN_VALUE : frontier - maxLatenessTicks;
            bounded = true;
        }
        // an incomplete switch waits for the next switch on its processor, which names its new thread:
        // that switch opens the processor's next batch, which a file session writes as late as any
        if (complete && t < safeBefore) return true;
        if (t < forcedBefore) {
            counters.latenessLimitForced++;
            return true;
        }
        if (queued > maxQueued) {
            counters.queueLimitForced++;
            return true;
        }
        return false;
    }

    /**
     * The time up to which every processor's own buffers (or a declared flush timer) show its events to be in the trace
     * read so far, whatever a finished file's lateness says: the earliest of the processors' latest evidence, as the merge
     * releases on; {@link Long#MIN_VALUE} when a processor has shown nothing. When a session ends cut short, a processor's
     * buffers after it may be missing, so derived times from then on are not known (docs/architecture.md "Incomplete sessions").
     */
    long knownUntil() {
        return safeBefore(Long.MIN_VALUE);
    }

    /**
     * Everything any processor logged before this time is in the trace read so far: in a finished
     * file, its lateness before the latest event read. A live session has not shown its future: a
     * quiet processor's first buffer is the one that comes later than all before it, so only the
     * processors' own buffers tell.
     */
    private long writtenBefore() {
        long frontier = intake.frontier;
        if (frontier == Long.MIN_VALUE || !limits.finishedFile()) return Long.MIN_VALUE;
        long w = frontier - limits.fileLatenessTicks();
        return w > frontier ? Long.MIN_VALUE : w; // past the clock's start
    }

    /**
     * The earliest time any processor may still produce an item at: what its own buffers show, or
     * in a finished file what its lateness shows, whichever is later.
     */
    private long safeBefore(long writtenBefore) {
        long min = Long.MAX_VALUE;
        // a declared flush timer writes every processor's events within it: a quiet one's are in, up to twice that ago
        long frontier = intake.frontier;
        long flushed = flushBoundTicks == Long.MAX_VALUE || frontier == Long.MIN_VALUE || frontier - flushBoundTicks > frontier
                ? Long.MIN_VALUE : frontier - flushBoundTicks;
        for (int cpu = 0; cpu < lanes.count(); cpu++) {
            ProcessorLanes.Lane l = lanes.get(cpu);
            long events = Math.max(l.eventTs, flushed);
            long evidence;
            // a quiet processor's compact batch stays open until it switches again: no flush timer bounds its packets
            if (intake.sawCompact) evidence = Math.min(events, l.packetTs);
            else if (intake.sawCSwitch) evidence = events;
            else evidence = Long.MIN_VALUE; // the session's first batch may still hold older packets
            long w = Math.max(evidence, writtenBefore);
            if (w < min) min = w;
        }
        return min;
    }
}
