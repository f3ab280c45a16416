package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.swapstream.etw.KernelEnums;
import io.swapstream.schemas.avro.ThreadStats;
import java.util.Random;
import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import org.junit.jupiter.api.Test;

/** The rows' sketches, read with DDSketch's own protobuf binding, give the rows' percentiles, and merge. */
class SketchBytesTest {
    @Test
    void aRowsSketchesGiveItsPercentiles() throws Exception {
        Random random = new Random(3);
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        for (int i = 0; i < 5000; i++) {
            long t = 1_000_000_000L + i * 1000L;
            a.switchIn(t, (long) Math.exp(8 + random.nextGaussian() * 3), 1);
            a.ready((long) (Math.exp(6 + random.nextGaussian() * 2)), Integer.MIN_VALUE, false, -1);
            a.switchOut(t + 500, KernelEnums.STATE_WAITING, 6, 8, 1000 + random.nextInt(1_000_000));
        }
        ThreadStats row = a.toStats("s", "h", 7, 1, "p.exe", null, 0, 0, true);
        // the library's own reader of the protobuf message, as a downstream consumer would call it
        DDSketch waits = DDSketchProtoBinding.fromProto(ThreadStatsAccumulator::newStore,
                com.datadoghq.sketch.ddsketch.proto.DDSketch.parseFrom(row.getWaitSketch().duplicate()));
        double[] q = waits.getValuesAtQuantiles(new double[] {0.5, 0.9, 0.99});
        assertEquals(row.getWaitP50Nanos(), clamp(q[0], row.getWaitMinNanos(), row.getWaitMaxNanos()));
        assertEquals(row.getWaitP90Nanos(), clamp(q[1], row.getWaitMinNanos(), row.getWaitMaxNanos()));
        assertEquals(row.getWaitP99Nanos(), clamp(q[2], row.getWaitMinNanos(), row.getWaitMaxNanos()));
        assertEquals(row.getWaitCount(), (long) waits.getCount());
        DDSketch readies = SketchBytes.read(row.getReadySketch());
        assertEquals(row.getReadyP99Nanos(), clamp(readies.getValueAtQuantile(0.99), 0, row.getReadyMaxNanos()));
        assertEquals(row.getRunCount(), (long) SketchBytes.read(row.getRunSketch()).getCount());
        // read back, it merges with the accumulators' own sketches: the same mapping
        DDSketch merged = ThreadStatsAccumulator.newSketch();
        merged.mergeWith(waits);
        merged.mergeWith(SketchBytes.read(row.getWaitSketch()));
        assertEquals(2 * row.getWaitCount(), (long) merged.getCount());
        assertNull(new ThreadStatsAccumulator().toStats("s", "h", 8, null, null, null, 0, 0, false).getWaitSketch(), "none without waits");
    }

    /**
     * A dense core and far outliers: the core travels as the contiguous run, the outliers as map
     * entries, every bin reads back with its count, and the message is smaller than the library's
     * all-contiguous one.
     */
    @Test
    void binsTravelAsARunWhereDenseAndAsAMapElsewhere() throws Exception {
        DDSketch s = ThreadStatsAccumulator.newSketch();
        Random random = new Random(5);
        for (int i = 0; i < 20_000; i++) s.accept(50_000 + random.nextInt(50_000));
        s.accept(3_000);
        s.accept(0);
        s.accept(2_000_000_000L);
        s.accept(9_000_000_000L);
        java.nio.ByteBuffer bytes = SketchBytes.of(s);
        var proto = com.datadoghq.sketch.ddsketch.proto.DDSketch.parseFrom(bytes.duplicate());
        assertEquals(3, proto.getPositiveValues().getBinCountsCount(), "the three outliers as map entries");
        org.junit.jupiter.api.Assertions.assertTrue(proto.getPositiveValues().getContiguousBinCountsCount() > 10, "the core as a run");
        org.junit.jupiter.api.Assertions.assertTrue(bytes.remaining() < s.serialize().remaining() / 2,
                bytes.remaining() + " bytes against the library's " + s.serialize().remaining());
        java.util.Map<Integer, Double> want = new java.util.TreeMap<>();
        s.getPositiveValueStore().forEach((index, count) -> want.put(index, count));
        java.util.Map<Integer, Double> got = new java.util.TreeMap<>();
        SketchBytes.read(bytes).getPositiveValueStore().forEach((index, count) -> got.put(index, count));
        assertEquals(want, got);
        assertEquals(s.getCount(), SketchBytes.read(bytes).getCount());
    }

    static long clamp(double v, long min, long max) {
        return Math.max(min, Math.min(max, Math.round(v)));
    }
}
