package io.swapstream.http;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.store.Bin;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import io.swapstream.aggregate.SketchBytes;
import it.unimi.dsi.fastutil.ints.Int2LongMap;
import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;

/**
 * One series of a fleet latency histogram, cumulative since this instance started: the bins of every
 * merged DDSketch it took, counted into the classic buckets of the {@link LatencyLadder} (exact) and into
 * native buckets of schema {@value #NATIVE_SCHEMA}, and the exact sum of the times.
 */
final class LatencyHistogram {
    /**
     * Native buckets 2^(1/32) wide, 2.2%: as fine as DDSketch's 2% bins. A bin's count goes to the native bucket
     * holding the bin's estimate, so a native quantile is off by DDSketch's 1% and at most one native bucket more.
     */
    static final int NATIVE_SCHEMA = 5;

    private static final LatencyLadder LADDER = LatencyLadder.ROWS;
    /** Per bucket, not cumulative; the last is +Inf. */
    private final long[] buckets = new long[LADDER.size() + 1];
    private final Int2LongOpenHashMap nativeBuckets = new Int2LongOpenHashMap();
    private long zeroCount;
    private long count;
    private long sumNanos;

    /** Adds the times of a merged sketch (the rows' protobuf form; null for none), whose exact sum is {@code sumNanos}. */
    void add(ByteBuffer sketchBytes, long sumNanos) {
        this.sumNanos += sumNanos;
        if (sketchBytes == null) return;
        DDSketch sketch = SketchBytes.read(sketchBytes);
        IndexMapping mapping = sketch.getIndexMapping();
        boolean byIndex = LADDER.binsOf(mapping);
        // times of 0 (and below the mapping's smallest) are the sketch's zero count, which it does not show
        long zeros = Math.round(sketch.getCount() - sketch.getPositiveValueStore().getTotalCount() - sketch.getNegativeValueStore().getTotalCount());
        zeroCount += zeros;
        buckets[0] += zeros;
        count += zeros;
        Iterator<Bin> bins = sketch.getPositiveValueStore().getAscendingIterator();
        while (bins.hasNext()) {
            Bin b = bins.next();
            long n = Math.round(b.getCount());
            if (n == 0) continue;
            double nanos = mapping.value(b.getIndex());
            buckets[byIndex ? LADDER.bucketOfBin(b.getIndex()) : LADDER.bucketOf(nanos)] += n;
            nativeBuckets.addTo(nativeIndex(nanos / 1e9), n);
            count += n;
        }
    }

    /** Adds another series' counts: the sum of series, as {@code _other}. */
    void add(LatencyHistogram other) {
        sumNanos += other.sumNanos;
        for (int i = 0; i < buckets.length; i++) buckets[i] += other.buckets[i];
        for (Int2LongMap.Entry e : other.nativeBuckets.int2LongEntrySet()) nativeBuckets.addTo(e.getIntKey(), e.getLongValue());
        zeroCount += other.zeroCount;
        count += other.count;
    }

    long count() {
        return count;
    }

    long sumNanos() {
        return sumNanos;
    }

    /** The native bucket of schema {@value #NATIVE_SCHEMA} holding {@code v}: (2^((i-1)/32), 2^(i/32)]. */
    static int nativeIndex(double v) {
        return (int) Math.ceil(Math.log(v) / Math.log(2) * (1 << NATIVE_SCHEMA));
    }

    HistogramDataPointSnapshot snapshot(Labels labels) {
        ClassicHistogramBuckets.Builder classic = ClassicHistogramBuckets.builder();
        // client_java takes each bucket's own count and writes them cumulative
        for (int k = 0; k <= LADDER.size(); k++) classic.bucket(k < LADDER.size() ? LADDER.boundSeconds(k) : Double.POSITIVE_INFINITY, buckets[k]);
        NativeHistogramBuckets.Builder positive = NativeHistogramBuckets.builder();
        int[] keys = nativeBuckets.keySet().toIntArray();
        Arrays.sort(keys);
        for (int k : keys) positive.bucket(k, nativeBuckets.get(k));
        return HistogramDataPointSnapshot.builder().labels(labels).classicHistogramBuckets(classic.build()).sum(sumNanos / 1e9)
                .nativeSchema(NATIVE_SCHEMA).nativeZeroCount(zeroCount).nativeZeroThreshold(0).nativeBucketsForPositiveValues(positive.build())
                .nativeBucketsForNegativeValues(NativeHistogramBuckets.EMPTY).build();
    }
}
