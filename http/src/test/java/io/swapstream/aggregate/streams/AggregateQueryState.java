package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.RowIndex;

/**
 * What an aggregate task keeps for the query API, made by hand for the API's tests: a task's row index, as it opens
 * one, and a session's progress as the sessions store holds it.
 */
public final class AggregateQueryState {
    private AggregateQueryState() {}

    /** The row index of {@code task}, open in {@code indexes} as a task starting here opens it. */
    public static RowIndex open(RowIndexes indexes, String task) {
        return indexes.open(task);
    }

    /** The task leaves this instance: its rows are no longer answered here. */
    public static void close(RowIndexes indexes, String task, RowIndex index) {
        indexes.close(task, index);
    }

    /** A session's progress as the aggregate writes it to its sessions store. */
    public static byte[] progress(String host, long switches, long threadRecords, boolean done, String endReason) {
        AggregateSession s = new AggregateSession();
        s.host = host;
        s.switches = switches;
        s.threads = threadRecords;
        s.done = done;
        s.endReason = endReason;
        return s.encode();
    }
}
