package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/** Feeds decoded switch batches, columns straight in, to the statistics; the score is switches per second. */
public class StatisticsBenchmark extends GeneratedTraceBenchmark {
    /** 0: whole session only; otherwise a tumbling window in nanoseconds. */
    @Param({"0", "1000000000"})
    public long windowNanos;

    private List<SwitchBatch> batches;

    @Setup
    public void decode() throws IOException {
        batches = new ArrayList<>();
        SwitchBatchSerde copy = new SwitchBatchSerde();
        batches(options(), b -> batches.add(copy.deserialize("t", copy.serialize("t", b))));
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public SessionStatistics aggregate() {
        SessionStatistics s = new SessionStatistics(windowNanos);
        for (SwitchBatch b : batches) s.accept(b);
        return s;
    }
}
