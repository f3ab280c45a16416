package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.LabelStore;
import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.StatisticsOutput;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.aggregate.WakeEdges;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.schemas.avro.WakeEdge;
import io.swapstream.schemas.state.StateFormat;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import io.swapstream.stage.StateStores;
import java.util.List;
import java.util.function.Consumer;

/**
 * A session in a task's memory: its {@link SessionStatistics}, whose accumulators are paged between
 * memory and the stores ({@link AccumulatorPages}), and the rows they give. A window's rows go out once,
 * final, when it closes; whole-session rows go out as they change ({@link #emitChanged}: with windows, as windows close
 * into them, to the query store alone) and final when the session ends. The accumulators are written every {@link AggregateSettings#flushEvery} batches, or
 * {@link AggregateSettings#flushTraceNanos} of trace time (with windows, at a close); the batches since are noted in the redo store, which a restore takes again.
 */
final class OpenSession implements LabelStore, StatisticsOutput {
    final String session;
    final AggregateSession state;
    final SessionStatistics statistics;
    /** The timestamp of the input record being taken: its rows carry it. */
    long timestamp;
    /** Taking the batches since the last write again after a restart: nothing is emitted. */
    boolean replaying;
    /** Skipping batches this session has taken before: one log line for a run of them. */
    boolean skipping;
    /**
     * The time, Unix ns, from which the batch being taken says the session's times are not known (the decode stage's
     * {@link io.swapstream.stage.IncompleteFrom} on what a session that ended incomplete sent at its end); null while
     * none said so. Not stored: every batch sent after it carries it too, and the session's end record says it is
     * incomplete for the rows that go out at its end.
     */
    Long incompleteFrom;
    /** Ending a session whose end record says it is not complete: its last window and whole-session rows are marked. */
    private boolean endingIncomplete;

    private final AggregateStores stores;
    private final RowEmitter rows;
    private final AggregateSettings settings;
    private final AggregateMetrics metrics;
    private final AccumulatorPages pages;
    /** The key of the open window's wake edges in the accumulators store, and whether the store has them. */
    private final String edgesKey;
    private boolean edgesStored;
    /** The end of the last window closed, Unix ns. */
    private long closedUntil = Long.MIN_VALUE;
    /** The newest switch taken, Unix ns. */
    private long switchesUntil = Long.MIN_VALUE;
    /** {@link #traceNow} at the last write (MIN_VALUE: none since this session came to memory). */
    private long writtenAt = Long.MIN_VALUE;
    /**
     * How long after a window's end, in the session's switches, its whole-session accumulators are merged and written,
     * where a write comes at each close: spread by session over a quarter window (20 s at most), as every host's
     * windows end at once and those reads and writes were half the stage's work at a 1,000-host window end, before
     * the last hosts' rows went out.
     */
    private final long mergeDelayNanos;
    static final long MERGE_SPREAD_NANOS = 20_000_000_000L;

    OpenSession(String session, AggregateSession state, AggregateStores stores, RowEmitter rows, AggregateSettings settings,
                AggregateMetrics metrics) {
        this.session = session;
        this.state = state;
        this.stores = stores;
        this.rows = rows;
        this.settings = settings;
        this.metrics = metrics;
        this.pages = new AccumulatorPages(session, stores, state.batches > 0, writesAtEachClose(settings));
        this.mergeDelayNanos = writesAtEachClose(settings)
                ? Math.floorMod(session.hashCode(), 1000) * (Math.min(settings.windowNanos() / 4, MERGE_SPREAD_NANOS) / 1000) : 0;
        this.statistics = new SessionStatistics(settings.windowNanos(), pages, this, this);
        if (state.statistics.length > 0) statistics.readState(new StateReader(state.statistics, 0, state.statistics.length));
        statistics.identify(session, state.host != null ? state.host : io.swapstream.etw.LogfileHeader.hostOf(session));
        this.edgesKey = AggregateStores.edgesKey(session);
        if (state.batches > 0) {
            byte[] edges = stores.accumulators().get(edgesKey);
            if (edges != null) {
                statistics.restoreEdges(EDGES.read(edges, WakeEdges::read));
                edgesStored = true;
            }
        }
    }

    /** The open window's wake edges in the store. */
    static final StateFormat EDGES = new StateFormat("wake edges", 2);

    @Override
    public void edgesClosed(List<WakeEdge> edges) {
        if (!replaying) rows.emitEdges(this, edges);
    }

    @Override
    public void windowRow(int tid, ThreadStatsAccumulator a, long start) {
        if (!replaying) rows.emit(this, tid, a, start, true, windowKnown(start));
    }

    @Override
    public void windowClosed(long start) {
        if (!replaying) {
            metrics.windowsClosed.record();
            metrics.closed(start + settings.windowNanos());
        }
        closedUntil = Math.max(closedUntil, start + settings.windowNanos());
        rows.dropWindow(session, start - settings.keepWindows() * settings.windowNanos());
    }

    /** Whether the window from {@code start} ends by the time the session's switches are known until. */
    private boolean windowKnown(long start) {
        if (endingIncomplete) return false;
        return incompleteFrom == null || incompleteFrom != Long.MIN_VALUE && start + settings.windowNanos() <= incompleteFrom;
    }

    @Override
    public void put(ThreadLabel t) {
        // a store write per thread record would cost more than its statistics: written with the accumulators
        pages.label(t);
        if (!replaying) state.threads++; // counted the first time round
    }

    @Override
    public ThreadLabel get(int tid) {
        return pages.storedLabel(tid);
    }

    @Override
    public void forEach(Consumer<ThreadLabel> each) {
        pages.forEachStoredLabel(each);
    }

    /** The thread's label: from memory, or after a restart the store's. */
    ThreadLabel label(int tid) {
        return statistics.labels().label(tid);
    }

    /** Notes batch {@code entry} (a reference to the input topic) taken: a restore takes it again. */
    void noteBatch(byte[] entry, int bytes) {
        stores.redo().note(session, state.batches++, entry);
        state.redoBytes += bytes;
    }

    /** Windows at least as long as the write span: a write comes at each close (after its merge delay). */
    private static boolean writesAtEachClose(AggregateSettings settings) {
        return settings.windowNanos() > 0 && settings.windowNanos() >= settings.flushTraceNanos();
    }

    /** A batch whose newest switch is at {@code nanos}, Unix ns, was taken. */
    void tookSwitchesUntil(long nanos) {
        switchesUntil = Math.max(switchesUntil, nanos);
        // without windows the first span starts with the first switch; with windows the first close writes
        if (settings.windowNanos() == 0 && writtenAt == Long.MIN_VALUE) writtenAt = switchesUntil;
    }

    /**
     * Trace time, Unix ns: with windows the end of the last window closed, without the newest switch taken. Writes go by
     * it, not by batches: a host sends from one batch a second to thousands, and minute windows counted short by batches
     * kept every thread's whole-session accumulator in memory beside its window's until the aggregate ran out of heap at
     * 1,000 hosts (issue 59).
     */
    private long traceNow() {
        return settings.windowNanos() > 0 ? closedUntil : switchesUntil;
    }

    /** After each record: the session's progress, and the accumulators when a write is due. */
    void save() {
        if (settings.flushEvery().reached(state.batches - state.flushedBatches, state.redoBytes) || traceSpanPassed()) flush();
        stores.progress().put(session, state.encode());
    }

    /**
     * {@link AggregateSettings#flushTraceNanos} of trace time have passed since the last write; with windows, and a window
     * has closed since (whole-session accumulators change only then, so a write between closes would free nothing).
     */
    private boolean traceSpanPassed() {
        if (settings.windowNanos() > 0 && !pages.windowsClosedSinceWrite()) return false;
        if (pages.mergesWaiting() && switchesUntil < closedUntil + mergeDelayNanos) return false;
        return writtenAt == Long.MIN_VALUE ? settings.windowNanos() > 0 : traceNow() - writtenAt >= settings.flushTraceNanos();
    }

    /** Writes every accumulator changed since the last time, and starts a new redo span. */
    private void flush() {
        pages.write(this::changedRow);
        writtenAt = traceNow();
        WakeEdges edges = statistics.openEdges();
        if (!edges.isEmpty()) {
            stores.accumulators().put(edgesKey, EDGES.write(edges::write));
            edgesStored = true;
        } else if (edgesStored) {
            StateStores.remove(stores.accumulators(), edgesKey);
            edgesStored = false;
        }
        dropRedo();
        // what carries over between batches (open window, PMC baselines), as of the accumulators just written
        StateWriter o = new StateWriter(64);
        statistics.writeState(o);
        state.statistics = o.toByteArray();
    }

    private void dropRedo() {
        stores.redo().drop(session, state.flushedBatches, state.batches);
        state.flushedBatches = state.batches;
        state.redoBytes = 0;
    }

    /**
     * The whole-session rows that changed since the last time: to the topic without windows; with windows to the query
     * store alone, as the topic's window rows add up to them (at a fleet's window end, sending them too was half the
     * stage's burst of rows).
     */
    void emitChanged() {
        pages.takeRowsDue(this::changedRow);
    }

    int accumulatorsInMemory() {
        return pages.inMemory();
    }

    private void changedRow(int tid, ThreadStatsAccumulator a) {
        if (settings.windowNanos() > 0) rows.keep(this, tid, a, incompleteFrom == null);
        else rows.emit(this, tid, a, null, false, incompleteFrom == null);
    }

    /**
     * Every switch and thread record has arrived: the last window and every whole-session row go out final, marked
     * incomplete unless the session's end record says {@code complete}; the state but the progress goes.
     */
    void finish(long nowMs, boolean complete) {
        endingIncomplete = !complete;
        statistics.closeAll();
        pages.takeAll((tid, a) -> rows.emit(this, tid, a, null, true, complete));
        if (edgesStored) StateStores.remove(stores.accumulators(), edgesKey);
        edgesStored = false;
        dropRedo();
        state.done = true;
        state.endedMs = nowMs;
        state.statistics = new byte[0];
        stores.progress().put(session, state.encode());
    }
}
