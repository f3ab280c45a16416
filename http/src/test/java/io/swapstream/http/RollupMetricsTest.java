package io.swapstream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.swapstream.aggregate.SketchBytes;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ProcessStatsAdded;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.mapping.LogarithmicMapping;
import com.datadoghq.sketch.ddsketch.store.UnboundedSizeDenseStore;
import org.junit.jupiter.api.Test;

class RollupMetricsTest {
    private static final LogarithmicMapping MAPPING = new LogarithmicMapping(ThreadStatsAccumulator.RELATIVE_ACCURACY);
    private static final LatencyLadder LADDER = LatencyLadder.ROWS;

    @Test
    void everyBucketBoundCountsExactlyTheTimesAtMostIt() {
        // by hand: the first bound is the DDSketch edge nearest 1 µs, within the bins' 2%, and the last nearest 100 s
        assertEquals(41, LADDER.size());
        assertTrue(Math.abs(LADDER.boundNanos(0) - 1_000) <= 20, "first bound " + LADDER.boundNanos(0));
        assertTrue(Math.abs(LADDER.boundNanos(40) - 100_000_000_000L) <= 2_000_000_000L, "last bound " + LADDER.boundNanos(40));
        Random random = new Random(42);
        for (int k = 0; k < LADDER.size(); k++) {
            long bound = LADDER.boundNanos(k);
            for (long v = bound - 3; v <= bound + 3; v++) assertEquals(expectedBucket(v), LADDER.bucketOfBin(MAPPING.index(v)), "time " + v);
        }
        for (int i = 0; i < 100_000; i++) {
            long v = (long) Math.pow(10, 1 + random.nextDouble() * 11);
            assertEquals(expectedBucket(v), LADDER.bucketOfBin(MAPPING.index(v)), "time " + v);
        }
    }

    /** The first bucket whose bound is at least v. */
    private static int expectedBucket(long v) {
        for (int k = 0; k < LADDER.size(); k++) if (v <= LADDER.boundNanos(k)) return k;
        return LADDER.size();
    }

    @Test
    void theRowsSketchesAreCountedByTheirBins() {
        DDSketch s = sketch(1_000, 5_000);
        assertTrue(LADDER.binsOf(SketchBytes.read(SketchBytes.of(s)).getIndexMapping()));
    }

    @Test
    void aRevisionAddsOnlyWhatItAddedAndTheBucketsAreExact() {
        RollupMetrics m = new RollupMetrics(10, 10);
        long[] first = {0, 900, 1_500, 40_000, 2_000_000, 7_000_000_000L};
        long[] later = {3_000, 3_000, 250_000_000_000L};
        m.take(processRow("svchost.exe", 0, first, null));
        // revision 1: the whole row again (first and later merged), and what it added
        long[] both = concat(first, later);
        m.take(processRow("svchost.exe", 1, both, later));
        // a revision without what it added counts nothing (a reader of an older writer)
        m.take(processRow("svchost.exe", 2, both, null));
        String text = scrape(m);
        assertEquals(both.length, value(text, "swapstream_process_ready_seconds_count{process=\"svchost.exe\"}"));
        assertEquals(sum(both) / 1e9, value(text, "swapstream_process_ready_seconds_sum{process=\"svchost.exe\"}"), 1e-9);
        for (int k = 0; k < LADDER.size(); k++) {
            long bound = LADDER.boundNanos(k);
            long atMost = java.util.Arrays.stream(both).filter(v -> v <= bound).count();
            String le = Double.toString(LADDER.boundSeconds(k));
            assertEquals(atMost, value(text, "swapstream_process_ready_seconds_bucket{process=\"svchost.exe\",le=\"" + le + "\"}"), "le " + le);
        }
        assertEquals(both.length, value(text, "swapstream_process_ready_seconds_bucket{process=\"svchost.exe\",le=\"+Inf\"}"));
        assertEquals(2 * 7, value(text, "swapstream_process_switches_total{process=\"svchost.exe\"}"));
    }

    /** The native histogram's quantiles are within DDSketch's 1% and one native bucket (2.2%) of the exact ones. */
    @Test
    void theNativeHistogramIsWithinThreePercentOfTheExactQuantiles() {
        Random random = new Random(7);
        long[] times = new long[20_000];
        for (int i = 0; i < times.length; i++) times[i] = (long) Math.pow(10, 3 + random.nextDouble() * 7); // 1 µs to 10 s
        RollupMetrics m = new RollupMetrics(10, 10);
        m.take(processRow("a.exe", 0, times, null));
        m.collect(); // a new series' first collection is zero
        var point = ((io.prometheus.metrics.model.snapshots.HistogramSnapshot) m.collect().stream()
                .filter(x -> x.getMetadata().getName().equals("swapstream_process_ready_seconds")).findFirst().orElseThrow())
                .getDataPoints().get(0);
        assertEquals(LatencyHistogram.NATIVE_SCHEMA, point.getNativeSchema());
        long[] sorted = times.clone();
        java.util.Arrays.sort(sorted);
        for (double q : new double[] {0.5, 0.9, 0.99, 0.999}) {
            long rank = (long) Math.ceil(q * sorted.length);
            double exact = sorted[(int) rank - 1] / 1e9;
            long seen = point.getNativeZeroCount();
            double upper = Double.NaN;
            for (var b : point.getNativeBucketsForPositiveValues()) {
                seen += b.getCount();
                if (seen >= rank) {
                    upper = Math.pow(2, b.getBucketIndex() / 32.0);
                    break;
                }
            }
            double error = upper / exact;
            assertTrue(error > 0.99 && error < 1.033, "q " + q + ": native bucket's bound " + upper + " for the exact " + exact);
        }
    }

    /** Prometheus asks for protobuf when it takes native histograms: /metrics then answers in it, else in text. */
    @Test
    void theExpositionFollowsTheAcceptHeader() {
        String protobuf = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
        assertTrue(StageMetrics.contentType(protobuf).startsWith("application/vnd.google.protobuf"), StageMetrics.contentType(protobuf));
        assertTrue(StageMetrics.contentType("text/plain;version=0.0.4").startsWith("text/plain"));
        assertTrue(StageMetrics.contentType(null).startsWith("text/plain"));
    }

    @Test
    void namesBeyondTheLimitAddUpUnderOtherUntilOneOutscoresAnAdmittedName() {
        RollupMetrics m = new RollupMetrics(1, 1);
        m.take(processRow("a.exe", 0, new long[] {1_000_000}, null));
        m.take(processRow("b.exe", 0, new long[] {1_500_000}, null)); // not twice a's: b goes under _other
        String text = scrape(m);
        assertEquals(1, value(text, "swapstream_process_ready_seconds_count{process=\"a.exe\"}"));
        assertEquals(1, value(text, "swapstream_process_ready_seconds_count{process=\"_other\"}"));
        assertFalse(text.contains("process=\"b.exe\""));
        m.take(processRow("b.exe", 0, new long[] {9_000_000}, null)); // b's score now 10.5 ms against a's 1 ms: b takes a's place
        text = scrape(m);
        assertFalse(text.contains("process=\"a.exe\""));
        assertEquals(1, value(text, "swapstream_process_ready_seconds_count{process=\"b.exe\"}"));
        assertEquals(1, value(text, "swapstream_process_ready_seconds_count{process=\"_other\"}"), "b's first row stays where it was counted");
    }

    /**
     * A new host's or process's series is 0 on the first scrape and its value on the next: rate() and increase() see
     * its first window, where a series appearing at its full value had nothing earlier to increase from.
     */
    @Test
    void aNewSeriesIsZeroOnItsFirstScrapeSoItsFirstWindowCounts() {
        RollupMetrics m = new RollupMetrics(10, 10);
        ProcessStats row = processRow("a.exe", 0, new long[] {1_000_000, 2_000_000}, null);
        row.setTopHosts(java.util.Map.of("web01", 3_000_000L));
        m.take(row);
        String first = firstScrape(m);
        assertEquals(0, value(first, "swapstream_process_ready_seconds_count{process=\"a.exe\"}"));
        assertEquals(0, value(first, "swapstream_process_ready_seconds_bucket{process=\"a.exe\",le=\"+Inf\"}"));
        assertEquals(0, value(first, "swapstream_process_switches_total{process=\"a.exe\"}"));
        assertEquals(0, value(first, "swapstream_process_host_ready_seconds_total{host=\"web01\",process=\"a.exe\"}"));
        String second = firstScrape(m);
        assertEquals(2, value(second, "swapstream_process_ready_seconds_count{process=\"a.exe\"}"));
        assertEquals(7, value(second, "swapstream_process_switches_total{process=\"a.exe\"}"));
        assertEquals(0.003, value(second, "swapstream_process_host_ready_seconds_total{host=\"web01\",process=\"a.exe\"}"), 1e-12);
        // a process without a name: one name everywhere, the page's and the tables'
        ProcessStats unnamed = processRow("x", 0, new long[] {5_000}, null);
        unnamed.setProcessName(null);
        m.take(unnamed);
        assertEquals(1, value(scrape(m), "swapstream_process_ready_seconds_count{process=\"(unknown)\"}"));
    }

    @Test
    void hostsHaveReadyTimeRunTimeAndSwitches() {
        RollupMetrics m = new RollupMetrics(10, 10);
        HostStats h = new HostStats();
        h.setHost("web01");
        h.setWindowStartNanos(0L);
        h.setRevision(0);
        h.setReadySketch(SketchBytes.of(sketch(2_000, 4_000)));
        h.setReadySumNanos(6_000L);
        h.setRunSumNanos(3_000_000_000L);
        h.setSwitchInCount(5L);
        m.take(h);
        String text = scrape(m);
        assertEquals(2, value(text, "swapstream_host_ready_seconds_count{host=\"web01\"}"));
        assertEquals(3.0, value(text, "swapstream_host_run_seconds_total{host=\"web01\"}"), 1e-12);
        assertEquals(5, value(text, "swapstream_host_switches_total{host=\"web01\"}"));
    }

    /** What Prometheus sees on a scrape after the first, which shows every new series at zero. */
    private static String scrape(RollupMetrics m) {
        m.collect();
        return firstScrape(m);
    }

    private static String firstScrape(RollupMetrics m) {
        PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        r.getPrometheusRegistry().register(m);
        return r.scrape();
    }

    private static double value(String text, String series) {
        Matcher x = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        assertTrue(x.find(), series + " in\n" + text);
        return Double.parseDouble(x.group(1));
    }

    private static ProcessStats processRow(String name, int revision, long[] ready, long[] added) {
        ProcessStats p = new ProcessStats();
        p.setProcessName(name);
        p.setWindowStartNanos(0L);
        p.setRevision(revision);
        p.setReadySketch(SketchBytes.of(sketch(ready)));
        p.setReadySumNanos(sum(ready));
        p.setReadyCount((long) ready.length);
        p.setWaitSumNanos(0L);
        p.setRunSumNanos(0L);
        p.setSwitchInCount(7L * (revision + 1));
        if (added != null) {
            p.setAdded(ProcessStatsAdded.newBuilder().setThreads(1L).setSwitchInCount(7L).setReadyCount(added.length).setReadySumNanos(sum(added))
                    .setReadySketch(SketchBytes.of(sketch(added))).build());
        }
        return p;
    }

    private static DDSketch sketch(long... nanos) {
        DDSketch s = new DDSketch(MAPPING, () -> new UnboundedSizeDenseStore());
        for (long v : nanos) s.accept(v);
        return s;
    }

    private static long sum(long[] v) {
        long s = 0;
        for (long x : v) s += x;
        return s;
    }

    private static long[] concat(long[] a, long[] b) {
        long[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
