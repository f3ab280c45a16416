package io.swapstream.http;

import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.mapping.LogarithmicMapping;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import java.util.Arrays;

/**
 * The classic buckets of the fleet's latency histograms: five a decade from 1 µs to 100 s (near 1, 1.58,
 * 2.51, 3.98 and 6.31 × 10^k), each bucket's bound put on the edge between two DDSketch bins, so that a
 * sketch's bins fall whole into buckets and the buckets' counts are exact, not estimates. A bound is
 * the largest whole nanosecond below the edge: the times are whole nanoseconds, so "at most the bound"
 * and "in a bin below the edge" count the same times.
 */
final class LatencyLadder {
    static final int PER_DECADE = 5;
    static final long FIRST_NANOS = 1_000;
    static final int DECADES = 8;

    private final IndexMapping mapping;
    /** Bucket k counts the bins with an index below {@code edgeIndex[k]}, less those of the buckets below it. */
    private final int[] edgeIndex;
    /** Bucket k's bound: every whole nanosecond at most this is in a bin below {@code edgeIndex[k]}. */
    private final long[] boundNanos;

    private LatencyLadder(IndexMapping mapping) {
        this.mapping = mapping;
        int n = DECADES * PER_DECADE + 1;
        edgeIndex = new int[n];
        boundNanos = new long[n];
        for (int k = 0; k < n; k++) {
            double nominal = FIRST_NANOS * Math.pow(10, (double) k / PER_DECADE);
            int bin = mapping.index(nominal);
            // the bin edge nearest the nominal bound: below the nominal's bin, or above it
            long lower = firstNanosOf(bin);
            long upper = firstNanosOf(bin + 1);
            boolean below = nominal - lower < upper - nominal;
            edgeIndex[k] = below ? bin : bin + 1;
            boundNanos[k] = (below ? lower : upper) - 1;
        }
    }

    /** The ladder of the rows' sketches (every series has the same bounds, so that they sum by bucket). */
    static final LatencyLadder ROWS = new LatencyLadder(new LogarithmicMapping(ThreadStatsAccumulator.RELATIVE_ACCURACY));

    /** Whether a sketch's bins are this ladder's: counted by index, exactly. */
    boolean binsOf(IndexMapping m) {
        return mapping.equals(m);
    }

    /** The smallest whole nanosecond whose bin is {@code bin} or above: found by the mapping's own index(), not by its bounds' arithmetic. */
    private long firstNanosOf(int bin) {
        long n = (long) Math.floor(mapping.lowerBound(bin)) - 2;
        while (mapping.index(n) < bin) n++;
        while (n > 1 && mapping.index(n - 1) >= bin) n--;
        return n;
    }

    /** How many buckets, +Inf aside. */
    int size() {
        return boundNanos.length;
    }

    /** Bucket {@code k}'s upper bound in seconds. */
    double boundSeconds(int k) {
        return boundNanos[k] / 1e9;
    }

    long boundNanos(int k) {
        return boundNanos[k];
    }

    /** The bucket of a time, in nanoseconds: for a sketch of another mapping, by its bins' estimates. */
    int bucketOf(double nanos) {
        int i = Arrays.binarySearch(boundNanos, (long) Math.ceil(nanos));
        return i >= 0 ? i : -i - 1;
    }

    /** The bucket holding a bin: the first whose edge is above it; {@link #size()} for +Inf. */
    int bucketOfBin(int binIndex) {
        int i = Arrays.binarySearch(edgeIndex, binIndex + 1);
        return i >= 0 ? i : -i - 1;
    }
}
