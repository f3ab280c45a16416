package io.swapstream.batch;

import io.swapstream.schemas.avro.SwitchSource;
import io.swapstream.schemas.avro.ThreadState;
import io.swapstream.schemas.avro.WaitMode;
import io.swapstream.schemas.avro.WaitReason;
import java.util.Arrays;
import java.util.List;

/**
 * Writes a {@link SwitchBatch} as a {@code ContextSwitchBatch} of the current schema: times as
 * differences, thread ids through a dictionary, the source as run lengths, nulls left out behind a
 * presence bitmap, and derived columns ({@link DerivedColumns}) as the rows that differ from their
 * rule. One per thread: it keeps its buffers from batch to batch.
 */
final class ColumnarBatchWriter {
    /** What an Unknown enum symbol reads back as: outside every table. */
    static final int UNKNOWN_VALUE = 255;
    static final int STATES = ThreadState.values().length;
    static final int REASONS = WaitReason.values().length;
    static final int MODES = WaitMode.values().length;
    static final int SOURCES = SwitchSource.values().length;

    private final AvroBinaryWriter w = new AvroBinaryWriter();
    private final DerivedColumns derived = new DerivedColumns();
    /**
     * The dictionary's open-addressing table: a slot belongs to this batch when its stamp is the
     * batch's, so starting a batch clears nothing (a general map would be most of the encoding's work).
     */
    private int[] slotTid = new int[1024];
    private int[] slotIndex = new int[1024];
    private int[] slotStamp = new int[1024];
    private int stamp;
    private int[] threadIds = new int[256];
    private int threads;
    private int[] oldIndex = new int[0];
    private int[] newIndex = new int[0];
    private int[] readierIndex = new int[0];
    private int[] scratchInts = new int[0];
    private long[] rule = new long[0];
    private int[] exceptionRows = new int[64];

    byte[] write(SwitchBatch b, byte[] header) {
        int n = b.count();
        capacity(n);
        w.reset();
        w.bytes(header);
        w.string(b.session());
        w.string(b.host());
        w.writeLong(n);
        w.writeLong(b.clockBaseTimestamp());
        w.writeLong(b.clockBaseNanos());
        w.writeLong(b.clockTicksPerSecond());
        w.ints(b.cpu, n);
        w.deltas(b.timestamp, n);
        DerivedColumns.timeNanos(b, n, rule);
        exceptions(b.timeNanos, n);
        sourceRuns(b.source, n);
        dictionary(b, n);
        w.ints(oldIndex, n);
        w.sparseInts(b.oldThreadPriority, n, SwitchBatch.NONE);
        w.sparseEnums(b.oldThreadState, n, SwitchBatch.NONE, STATES, true, scratchInts);
        w.sparseEnums(b.oldThreadWaitReason, n, SwitchBatch.NONE, REASONS, true, scratchInts);
        w.sparseEnums(b.oldThreadWaitMode, n, SwitchBatch.NONE, MODES, false, scratchInts);
        w.sparseInts(newIndex, n, SwitchBatch.NONE);
        w.sparseInts(b.newThreadPriority, n, SwitchBatch.NONE);
        w.sparseLongs(b.newThreadWaitTicks, n, SwitchBatch.NO_TIME);
        pmc(b, n);
        derived.timeSinceLast(b, n, threadIds, threads, oldIndex, newIndex, rule);
        exceptions(b.newThreadTimeSinceLastNanos, n);
        derived.runNanos(b, n, rule);
        exceptions(b.oldThreadRunNanos, n);
        threadInfos(b.threads());
        w.sparseLongs(b.newThreadReadyNanos, n, SwitchBatch.NO_TIME);
        DerivedColumns.waitsNanos(b, n, rule);
        exceptions(b.newThreadWaitsNanos, n);
        w.sparseInts(readierIndex, n, SwitchBatch.NONE);
        w.sparseInts(b.readyingProcessId, n, SwitchBatch.NONE);
        w.sparseInts(b.previousCState, n, SwitchBatch.NONE);
        w.sparseInts(b.oldThreadRank, n, SwitchBatch.NONE);
        w.sparseInts(b.newThreadPriorityDecrement, n, SwitchBatch.NONE);
        w.sparseInts(b.oldThreadIdealProcessor, n, SwitchBatch.NONE);
        w.sparseInts(b.oldThreadRemainingQuantum, n, SwitchBatch.NONE);
        return w.toByteArray();
    }

    private void capacity(int n) {
        if (oldIndex.length >= n) return;
        int c = Math.max(n, oldIndex.length * 2);
        oldIndex = new int[c];
        newIndex = new int[c];
        readierIndex = new int[c];
        scratchInts = new int[c];
        rule = new long[c];
    }

    /** The rows where {@code actual} differs from the rule just computed, and their values. */
    private void exceptions(long[] actual, int n) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (actual[i] != rule[i]) {
                if (k == exceptionRows.length) exceptionRows = Arrays.copyOf(exceptionRows, k * 2);
                exceptionRows[k++] = i;
            }
        }
        w.ints(exceptionRows, k);
        w.arrayStart(k);
        for (int j = 0; j < k; j++) {
            long v = actual[exceptionRows[j]];
            w.ensure(11);
            if (v == SwitchBatch.NO_TIME) {
                w.buf[w.pos++] = 0;
            } else {
                w.buf[w.pos++] = 2;
                w.longUnchecked(v);
            }
        }
        w.arrayEnd();
    }

    private void sourceRuns(int[] source, int n) {
        int runs = 0;
        for (int i = 0; i < n; i++) if (i == 0 || source[i] != source[i - 1]) runs++;
        w.arrayStart(runs);
        for (int i = 0; i < n; i++) if (i == 0 || source[i] != source[i - 1]) w.writeLong(source[i]);
        w.arrayEnd();
        w.arrayStart(runs);
        for (int i = 0, start = 0; i < n; i++) {
            if (i == n - 1 || source[i + 1] != source[i]) {
                w.writeLong(i + 1 - start);
                start = i + 1;
            }
        }
        w.arrayEnd();
    }

    /** Every thread id of the batch once, in order of first appearance, and the three index columns. */
    private void dictionary(SwitchBatch b, int n) {
        if (++stamp == 0) {
            Arrays.fill(slotStamp, 0);
            stamp = 1;
        }
        threads = 0;
        for (int i = 0; i < n; i++) {
            oldIndex[i] = index(b.oldThreadId[i]);
            int t = b.newThreadId[i];
            newIndex[i] = t == SwitchBatch.NONE ? SwitchBatch.NONE : index(t);
            t = b.readyingThreadId[i];
            readierIndex[i] = t == SwitchBatch.NONE ? SwitchBatch.NONE : index(t);
        }
        w.ints(threadIds, threads);
    }

    private int index(int tid) {
        int mask = slotTid.length - 1;
        int h = it.unimi.dsi.fastutil.HashCommon.mix(tid) & mask;
        while (slotStamp[h] == stamp) {
            if (slotTid[h] == tid) return slotIndex[h];
            h = h + 1 & mask;
        }
        if (threads == threadIds.length) threadIds = Arrays.copyOf(threadIds, threads * 2);
        threadIds[threads] = tid;
        slotTid[h] = tid;
        slotIndex[h] = threads;
        slotStamp[h] = stamp;
        if (++threads * 2 > slotTid.length) rehash();
        return threads - 1;
    }

    /** A table twice the size, with this batch's entries. */
    private void rehash() {
        int n = slotTid.length * 2;
        slotTid = new int[n];
        slotIndex = new int[n];
        slotStamp = new int[n];
        stamp = 1;
        int mask = n - 1;
        for (int k = 0; k < threads; k++) {
            int h = it.unimi.dsi.fastutil.HashCommon.mix(threadIds[k]) & mask;
            while (slotStamp[h] == stamp) h = h + 1 & mask;
            slotTid[h] = threadIds[k];
            slotIndex[h] = k;
            slotStamp[h] = stamp;
        }
    }

    private void pmc(SwitchBatch b, int n) {
        int[] counts = scratchInts;
        for (int i = 0; i < n; i++) counts[i] = b.pmcStart[i + 1] > b.pmcStart[i] ? 1 : SwitchBatch.NONE;
        int present = 0;
        for (int i = 0; i < n; i++) if (counts[i] != SwitchBatch.NONE) present++;
        // the bitmap, then each present row's counters as an array
        w.sparseBitmap(counts, n, SwitchBatch.NONE, present);
        w.arrayStart(present);
        for (int i = 0; i < n; i++) {
            int from = b.pmcStart[i];
            int to = b.pmcStart[i + 1];
            if (from == to) continue;
            w.arrayStart(to - from);
            for (int k = from; k < to; k++) w.writeLong(b.pmc[k]);
            w.arrayEnd();
        }
        w.arrayEnd();
    }

    private void threadInfos(List<ThreadLabel> threads) {
        w.arrayStart(threads.size());
        for (ThreadLabel t : threads) {
            w.string(t.session());
            w.writeLong(t.threadId());
            optional(t.processId());
            optional(t.processName());
            optional(t.threadName());
            optional(t.basePriority());
            optional(t.startNanos());
            optional(t.endNanos());
        }
        w.arrayEnd();
    }

    private void optional(Number v) {
        w.writeLong(v == null ? 0 : 1);
        if (v != null) w.writeLong(v.longValue());
    }

    private void optional(String v) {
        w.writeLong(v == null ? 0 : 1);
        if (v != null) w.string(v);
    }
}
