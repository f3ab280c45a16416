package io.swapstream.schemas;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a stage has done since this process started, counted where it happens: for the progress
 * lines of the long-lived commands and their metrics. One instance per stage in a process.
 */
public final class StageCounters {
    public static final StageCounters INGEST = new StageCounters("ingest");
    public static final StageCounters DECODE = new StageCounters("decode");
    public static final StageCounters AGGREGATE = new StageCounters("aggregate");

    public final String stage;
    public final LongAdder recordsIn = new LongAdder();
    public final LongAdder buffersIn = new LongAdder();
    public final LongAdder buffersOut = new LongAdder();
    public final LongAdder switchesIn = new LongAdder();
    public final LongAdder switchesOut = new LongAdder();
    public final LongAdder statsOut = new LongAdder();
    public final LongAdder windowsClosed = new LongAdder();
    /** Aggregate: batches skipped because the session's committed state had taken them already. */
    public final LongAdder duplicateBatches = new LongAdder();
    public final LongAdder deadLetters = new LongAdder();
    public final LongAdder sessionsEnded = new LongAdder();
    /** Ended sessions that left the stage's stores, their retention passed. */
    public final LongAdder sessionsForgotten = new LongAdder();
    public final AtomicLong sessionsOpen = new AtomicLong();
    /** Switches a session's merge emitted after later ones (a live session's lateness or memory limit). */
    public final LongAdder switchesOutOfOrder = new LongAdder();
    /** The Unix time, nanoseconds, of the latest switch this stage has emitted or taken; Long.MIN_VALUE before any. */
    public final AtomicLong latestSwitchNanos = new AtomicLong(Long.MIN_VALUE);
    /** Decode: per open session in this process, the items its merge holds and the bytes of its last decoder checkpoint. */
    public final java.util.concurrent.ConcurrentHashMap<String, long[]> merges = new java.util.concurrent.ConcurrentHashMap<>();

    /** Items the open sessions' merges hold, summed. */
    public long mergeQueued() {
        long n = 0;
        for (long[] m : merges.values()) n += m[0];
        return n;
    }

    /** The largest last decoder checkpoint of an open session, bytes. */
    public long largestCheckpoint() {
        long n = 0;
        for (long[] m : merges.values()) n = Math.max(n, m[1]);
        return n;
    }
    /** Dead letters by kind of reason (a short fixed word: malformed-buffer, missing-buffers, ...). */
    public final java.util.concurrent.ConcurrentHashMap<String, LongAdder> deadLettersByKind = new java.util.concurrent.ConcurrentHashMap<>();
    /** Buffers a session lost (dead letters, buffers that never came, those the ingester could not publish). */
    public final LongAdder buffersLost = new LongAdder();
    /** Events the logger itself reported lost, from the sessions' logfile headers and buffers. */
    public final LongAdder eventsLost = new LongAdder();

    /** Notes a switch at {@code nanos} emitted or taken. */
    public void switchAt(long nanos) {
        if (nanos > latestSwitchNanos.get()) latestSwitchNanos.accumulateAndGet(nanos, Math::max);
    }

    public void deadLetter(String kind) {
        deadLetters.increment();
        deadLettersByKind.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    private StageCounters(String stage) {
        this.stage = stage;
    }

    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("recordsIn", recordsIn.sum());
        m.put("buffersIn", buffersIn.sum());
        m.put("buffersOut", buffersOut.sum());
        m.put("switchesIn", switchesIn.sum());
        m.put("switchesOut", switchesOut.sum());
        m.put("statsOut", statsOut.sum());
        m.put("windowsClosed", windowsClosed.sum());
        m.put("duplicateBatches", duplicateBatches.sum());
        m.put("deadLetters", deadLetters.sum());
        m.put("sessionsEnded", sessionsEnded.sum());
        m.put("sessionsForgotten", sessionsForgotten.sum());
        m.put("sessionsOpen", sessionsOpen.get());
        m.put("switchesOutOfOrder", switchesOutOfOrder.sum());
        return m;
    }
}
