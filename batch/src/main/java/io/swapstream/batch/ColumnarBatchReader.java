package io.swapstream.batch;

import java.util.Arrays;

/**
 * Reads a {@code ContextSwitchBatch} of the current schema ({@link ColumnarBatchWriter}) back into
 * a {@link SwitchBatch}'s columns. One per thread: it keeps its buffers from batch to batch.
 */
final class ColumnarBatchReader {
    private final DerivedColumns derived = new DerivedColumns();
    private final int[][] threadIds = {new int[256]};
    private int[] oldIndex = new int[0];
    private int[] newIndex = new int[0];
    private final int[][] exceptionRows = {new int[64]};

    /**
     * Reads the record after its header into {@code into} (emptied first) or a new batch;
     * {@code cswitchDetail} false for the third schema, which ends before the CSwitch-only columns.
     */
    SwitchBatch read(AvroBinaryReader r, int length, SwitchBatch into, boolean cswitchDetail) {
        String session = r.string();
        String host = r.string();
        int n = r.readInt();
        // every row takes at least a byte in the columns of one per row
        if (n < 0 || n > length) throw new MalformedAvroException("a count of " + n + " rows in " + length + " bytes");
        long baseTs = r.readLong();
        long baseNanos = r.readLong();
        long ticksPerSecond = r.readLong();
        if (ticksPerSecond <= 0) throw new MalformedAvroException("a clock of " + ticksPerSecond + " ticks a second");
        SwitchBatch b = (into != null ? into : new SwitchBatch(n)).reset(session, host).clock(baseTs, baseNanos, ticksPerSecond);
        b.resize(n);
        if (oldIndex.length < n) {
            oldIndex = new int[Math.max(n, oldIndex.length * 2)];
            newIndex = new int[oldIndex.length];
        }
        r.ints(b.cpu, n);
        r.deltas(b.timestamp, n);
        DerivedColumns.timeNanos(b, n, b.timeNanos);
        exceptions(r, b.timeNanos, n);
        sourceRuns(r, b.source, n);
        int threads = r.intList(threadIds, length);
        int[] ids = threadIds[0];
        r.ints(oldIndex, n);
        r.sparseInts(b.oldThreadPriority, n, SwitchBatch.NONE);
        r.sparseEnums(b.oldThreadState, n, SwitchBatch.NONE, ColumnarBatchWriter.STATES, true, ColumnarBatchWriter.UNKNOWN_VALUE);
        r.sparseEnums(b.oldThreadWaitReason, n, SwitchBatch.NONE, ColumnarBatchWriter.REASONS, true, ColumnarBatchWriter.UNKNOWN_VALUE);
        r.sparseEnums(b.oldThreadWaitMode, n, SwitchBatch.NONE, ColumnarBatchWriter.MODES, false, ColumnarBatchWriter.UNKNOWN_VALUE);
        r.sparseInts(newIndex, n, SwitchBatch.NONE);
        lookUp(oldIndex, b.oldThreadId, n, ids, threads, false);
        lookUp(newIndex, b.newThreadId, n, ids, threads, true);
        r.sparseInts(b.newThreadPriority, n, SwitchBatch.NONE);
        r.sparseLongs(b.newThreadWaitTicks, n, SwitchBatch.NO_TIME);
        pmc(r, b, n, length);
        derived.timeSinceLast(b, n, ids, threads, oldIndex, newIndex, b.newThreadTimeSinceLastNanos);
        exceptions(r, b.newThreadTimeSinceLastNanos, n);
        derived.runNanos(b, n, b.oldThreadRunNanos);
        exceptions(r, b.oldThreadRunNanos, n);
        readThreads(r, b);
        r.sparseLongs(b.newThreadReadyNanos, n, SwitchBatch.NO_TIME);
        DerivedColumns.waitsNanos(b, n, b.newThreadWaitsNanos);
        exceptions(r, b.newThreadWaitsNanos, n);
        r.sparseInts(newIndex, n, SwitchBatch.NONE);
        lookUp(newIndex, b.readyingThreadId, n, ids, threads, true);
        r.sparseInts(b.readyingProcessId, n, SwitchBatch.NONE);
        column(r, b.previousCState, n, cswitchDetail);
        column(r, b.oldThreadRank, n, cswitchDetail);
        column(r, b.newThreadPriorityDecrement, n, cswitchDetail);
        column(r, b.oldThreadIdealProcessor, n, cswitchDetail);
        column(r, b.oldThreadRemainingQuantum, n, cswitchDetail);
        return b;
    }

    private static void column(AvroBinaryReader r, int[] column, int n, boolean present) {
        if (present) r.sparseInts(column, n, SwitchBatch.NONE);
        else Arrays.fill(column, 0, n, SwitchBatch.NONE);
    }

    private static void lookUp(int[] index, int[] into, int n, int[] ids, int threads, boolean optional) {
        for (int i = 0; i < n; i++) {
            int k = index[i];
            if (optional && k == SwitchBatch.NONE) {
                into[i] = SwitchBatch.NONE;
            } else if (k < 0 || k >= threads) {
                throw new MalformedAvroException("thread index " + k + " in a dictionary of " + threads);
            } else {
                into[i] = ids[k];
            }
        }
    }

    /** Puts the listed rows' values over the rule's. */
    private void exceptions(AvroBinaryReader r, long[] column, int n) {
        int k = r.intList(exceptionRows, n);
        int[] rows = exceptionRows[0];
        for (int j = 0; j < k; j++) {
            if (rows[j] < 0 || rows[j] >= n || (j > 0 && rows[j] <= rows[j - 1])) {
                throw new MalformedAvroException("exception rows not increasing within the batch's " + n + " rows");
            }
        }
        int j = 0;
        for (long c = r.block(); c != 0; c = r.block()) {
            if (c > k - j) throw new MalformedAvroException("more exception values than rows");
            for (long y = 0; y < c; y++) column[rows[j++]] = r.index(2) == 0 ? SwitchBatch.NO_TIME : r.readLong();
        }
        if (j != k) throw new MalformedAvroException("fewer exception values than rows");
    }

    private void sourceRuns(AvroBinaryReader r, int[] source, int n) {
        int runs = r.intList(exceptionRows, n);
        int[] values = Arrays.copyOf(exceptionRows[0], runs);
        for (int v : values) if (v < 0 || v >= ColumnarBatchWriter.SOURCES) throw new MalformedAvroException("source symbol " + v);
        int got = r.intList(exceptionRows, n);
        if (got != runs) throw new MalformedAvroException(runs + " run values and " + got + " run lengths");
        int i = 0;
        for (int k = 0; k < runs; k++) {
            int len = exceptionRows[0][k];
            if (len <= 0 || len > n - i) throw new MalformedAvroException("a run of " + len + " at row " + i + " of " + n);
            Arrays.fill(source, i, i + len, values[k]);
            i += len;
        }
        if (i != n) throw new MalformedAvroException("runs of " + i + " rows in a batch of " + n);
    }

    private static void pmc(AvroBinaryReader r, SwitchBatch b, int n, int length) {
        int bitmap = r.bitmap(n);
        int p = 0;
        int i = 0;
        for (long c = r.block(); c != 0; c = r.block()) {
            for (long y = 0; y < c; y++) {
                while (i < n && !r.bit(bitmap, i)) b.pmcStart[++i] = p;
                if (i == n) throw new MalformedAvroException("more counter arrays than the presence bitmap marks");
                for (long k = r.block(); k != 0; k = r.block()) {
                    if (k > length) throw new MalformedAvroException("a block of " + k + " counters");
                    b.pmcCapacity((int) (p + k));
                    for (long z = 0; z < k; z++) b.pmc[p++] = r.readLong();
                }
                b.pmcStart[++i] = p;
            }
        }
        while (i < n) {
            if (r.bit(bitmap, i)) throw new MalformedAvroException("fewer counter arrays than the presence bitmap marks");
            b.pmcStart[++i] = p;
        }
    }

    /** The thread records of a batch (the same in every schema). */
    static void readThreads(AvroBinaryReader r, SwitchBatch b) {
        for (long k = r.block(); k != 0; k = r.block()) {
            for (long j = 0; j < k; j++) {
                String s = r.string();
                int tid = r.readInt();
                Integer pid = r.index(2) == 0 ? null : r.readInt();
                String process = r.index(2) == 0 ? null : r.string();
                String name = r.index(2) == 0 ? null : r.string();
                Integer base = r.index(2) == 0 ? null : r.readInt();
                Long start = r.index(2) == 0 ? null : r.readLong();
                Long end = r.index(2) == 0 ? null : r.readLong();
                b.addThread(new ThreadLabel(s, tid, pid, process, name, base, start, end));
            }
        }
    }
}
