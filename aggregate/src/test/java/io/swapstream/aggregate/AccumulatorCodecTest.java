package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.schemas.avro.ThreadStats;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AccumulatorCodecTest {
    static ThreadStatsAccumulator sample() {
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.switchIn(1_000, 500, 2);
        a.ready(300, 104, true, 2);
        a.switchOut(2_000, 5, 6, 9, 1_000);
        a.switchIn(3_000, 1_000, ThreadStatsAccumulator.NONE);
        a.ready(1_000, Integer.MIN_VALUE, false, -1);
        a.switchIn(4_000, 700, 1);
        a.ready(50, 104, true, -1);
        a.switchIn(5_000, 90, 1);
        a.ready(90, 200, false, -1);
        return a;
    }

    static ThreadStats stats(ThreadStatsAccumulator a) {
        return a.toStats("s", "h", 7, 40, "app.exe", null, 0, 10, false);
    }

    @Test
    void readyTimeSurvivesTheStore() {
        ThreadStatsAccumulator a = sample();
        ThreadStats before = stats(a);
        assertEquals(4, before.getReadyCount());
        assertEquals(1_440, before.getReadySumNanos());
        assertEquals(1_000L, before.getReadyMaxNanos());
        assertEquals(Map.of("104", 2L, "200", 1L), before.getTopReadiers());
        assertEquals("104", before.getTopReadiers().keySet().iterator().next().toString());
        assertEquals(before, stats(AccumulatorCodec.decode(AccumulatorCodec.encode(a))));
    }

    /** Run slices' sketch, and an accumulator without ready times, survive the store. */
    @Test
    void runSketchAndNoReadiesSurviveTheStore() {
        ThreadStatsAccumulator plain = withoutReadies();
        ThreadStats got = stats(AccumulatorCodec.decode(AccumulatorCodec.encode(plain)));
        assertEquals(stats(plain), got);
        assertEquals(0, got.getReadyCount());
        assertEquals(1, (long) SketchBytes.read(got.getRunSketch()).getCount());
    }

    static ThreadStatsAccumulator withoutReadies() {
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.switchIn(1_000, 500, 2);
        a.switchOut(2_000, 5, 6, 9, 1_000);
        return a;
    }

    @Test
    void mergingAddsReadiers() {
        ThreadStatsAccumulator a = sample();
        ThreadStatsAccumulator b = sample();
        a.merge(b);
        ThreadStats m = stats(a);
        assertEquals(8, m.getReadyCount());
        assertEquals(Map.of("104", 4L, "200", 2L), m.getTopReadiers());
    }
}
