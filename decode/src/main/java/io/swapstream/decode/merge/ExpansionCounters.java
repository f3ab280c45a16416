package io.swapstream.decode.merge;

import io.swapstream.decode.event.ReadyThread;
import java.util.LinkedHashMap;
import java.util.Map;

/** What expansion saw and could not make consistent; reported, never hidden. */
public final class ExpansionCounters {
    public long switches;
    public long cswitchEvents;
    public long compactBatches;
    public long idlePackets;
    public long litePackets;
    public long fullPackets;
    /** The old thread is not the thread last switched in on that processor. */
    public long oldThreadNotLastSwitchedIn;
    /** A table index whose TidTable slot holds TID 0 in a non-idle packet. */
    public long emptyTidTableSlot;
    /**
     * Switches that reached the merge after later ones had been emitted (a live session's lateness
     * or memory limit let the later ones out first): emitted without derived times.
     */
    public long switchesOutOfOrder;
    /** Thread and process events that reached the merge after later items had been emitted. */
    public long lateEvents;
    /** Compact switches emitted before the next switch on their processor named their new thread (a processor silent past the logger's write bound). */
    public long switchesBeforeNewThreadKnown;
    /** Items emitted because the queue reached its memory cap, not because the merge knew they were next. */
    public long queueLimitForced;
    /** Items a live session's maximum lateness let out before the merge knew they were next. */
    public long latenessLimitForced;
    /** The most items waiting in the merge at once: what the merge held in memory. */
    public long peakQueued;
    /** Processors whose last switch has no known new thread at the end of the session. */
    public long lastSwitchWithoutNewThread;
    public long threadEvents;
    public long processEvents;
    /** ReadyThread events (0x0532). */
    public long readyEvents;

    /** Sets every counter from {@code v}, in {@link #toMap} order (a checkpoint's); counters it lacks stay 0. */
    void set(long[] v) {
        int i = 0;
        switches = i < v.length ? v[i++] : 0;
        cswitchEvents = i < v.length ? v[i++] : 0;
        compactBatches = i < v.length ? v[i++] : 0;
        idlePackets = i < v.length ? v[i++] : 0;
        litePackets = i < v.length ? v[i++] : 0;
        fullPackets = i < v.length ? v[i++] : 0;
        oldThreadNotLastSwitchedIn = i < v.length ? v[i++] : 0;
        emptyTidTableSlot = i < v.length ? v[i++] : 0;
        switchesOutOfOrder = i < v.length ? v[i++] : 0;
        lateEvents = i < v.length ? v[i++] : 0;
        switchesBeforeNewThreadKnown = i < v.length ? v[i++] : 0;
        queueLimitForced = i < v.length ? v[i++] : 0;
        peakQueued = i < v.length ? v[i++] : 0;
        lastSwitchWithoutNewThread = i < v.length ? v[i++] : 0;
        threadEvents = i < v.length ? v[i++] : 0;
        processEvents = i < v.length ? v[i++] : 0;
        readyEvents = i < v.length ? v[i++] : 0;
        latenessLimitForced = i < v.length ? v[i] : 0;
    }

    public Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("switches", switches);
        m.put("cswitchEvents", cswitchEvents);
        m.put("compactBatches", compactBatches);
        m.put("idlePackets", idlePackets);
        m.put("litePackets", litePackets);
        m.put("fullPackets", fullPackets);
        m.put("oldThreadNotLastSwitchedIn", oldThreadNotLastSwitchedIn);
        m.put("emptyTidTableSlot", emptyTidTableSlot);
        m.put("switchesOutOfOrder", switchesOutOfOrder);
        m.put("lateEvents", lateEvents);
        m.put("switchesBeforeNewThreadKnown", switchesBeforeNewThreadKnown);
        m.put("queueLimitForced", queueLimitForced);
        m.put("peakQueued", peakQueued);
        m.put("lastSwitchWithoutNewThread", lastSwitchWithoutNewThread);
        m.put("threadEvents", threadEvents);
        m.put("processEvents", processEvents);
        m.put("readyEvents", readyEvents);
        m.put("latenessLimitForced", latenessLimitForced);
        return m;
    }
}
