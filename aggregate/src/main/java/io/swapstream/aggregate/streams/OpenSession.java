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
 * into them, to the query store alone) and final when the session ends. The accumulators are written every {@link AggregateSettings#flushEvery} batches, or sooner once a
 * window has closed; the batches since are noted in the redo store, which a restore takes again.
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
    /** The batch count when a window last closed (-1: none yet). */
    private long batchesAtClose = -1;
    /**
     * Windows close within a quarter of the flush interval: whole-session accumulators of running threads stay in
     * memory, merged at each close and written with the rest, as a store round trip per thread per close would
     * cost more than the statistics. Else they wait in the store.
     */
    private boolean shortWindows;

    OpenSession(String session, AggregateSession state, AggregateStores stores, RowEmitter rows, AggregateSettings settings,
                AggregateMetrics metrics) {
        this.session = session;
        this.state = state;
        this.stores = stores;
        this.rows = rows;
        this.settings = settings;
        this.metrics = metrics;
        this.pages = new AccumulatorPages(session, stores, state.batches > 0);
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
        shortWindows = batchesAtClose >= 0 && state.batches - batchesAtClose < settings.flushEvery().records() / 4;
        batchesAtClose = state.batches;
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

    /** After each record: the session's progress, and the accumulators when a write is due. */
    void save() {
        long since = state.batches - state.flushedBatches;
        // a closed window's threads have their whole-session accumulators in memory until written: at once, unless windows are short
        if (settings.flushEvery().reached(since, state.redoBytes)
                || (pages.windowsClosedSinceWrite() && (!shortWindows || since >= settings.flushEvery().records() / 4))) {
            flush();
        }
        stores.progress().put(session, state.encode());
    }

    /** Writes every accumulator changed since the last time, and starts a new redo span. */
    private void flush() {
        pages.write(settings.windowNanos() == 0 || shortWindows, this::changedRow);
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
