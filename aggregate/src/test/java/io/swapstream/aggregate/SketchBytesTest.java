package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import io.swapstream.decode.KernelEnums;
import io.swapstream.schemas.avro.ThreadStats;
import java.util.Random;
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
            a.ready((long) (Math.exp(6 + random.nextGaussian() * 2)), Integer.MIN_VALUE);
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

    static long clamp(double v, long min, long max) {
        return Math.max(min, Math.min(max, Math.round(v)));
    }
}
