package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.datadoghq.sketch.ddsketch.DDSketch;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The one-pass percentiles give exactly what DDSketch's own getValueAtQuantile gives, zeros and single values included. */
class SketchQuantilesTest {
    @Test
    void onePassPercentilesEqualTheLibrarys() {
        SplittableRandom random = new SplittableRandom(44);
        for (int k = 0; k < 500; k++) {
            DDSketch s = ThreadStatsAccumulator.newSketch();
            int n = 1 + random.nextInt(k < 50 ? 3 : 3000);
            long max = 0;
            for (int i = 0; i < n; i++) {
                // some zeros (DDSketch's zero count), the rest spread over nine decades
                long v = random.nextInt(20) == 0 ? 0 : (long) Math.exp(random.nextDouble() * 21);
                ThreadStatsAccumulator.add(s, v);
                max = Math.max(max, v);
            }
            Long[] q = ThreadStatsAccumulator.quantiles(s, n, 0, max);
            double[] at = {0.50, 0.90, 0.99};
            for (int i = 0; i < at.length; i++) {
                long expected = Math.max(0, Math.min(max, Math.round(s.getValueAtQuantile(at[i]))));
                assertEquals(expected, q[i], "sketch " + k + ", q" + at[i]);
            }
            assertEquals(q[2], ThreadStatsAccumulator.p99(s, n, max), "sketch " + k + ", p99 from the top");
        }
        assertEquals(null, ThreadStatsAccumulator.p99(ThreadStatsAccumulator.newSketch(), 0, 0));
    }
}
