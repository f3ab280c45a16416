package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.SwitchBatchSerde;
import io.swapstream.decode.MaximumWaitReason;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Feeds decoded switch batches, columns straight in, to the statistics; the score is switches per second. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StatisticsBenchmark {
    static final int SWITCHES = 200_000;

    /** 0: whole session only; otherwise a tumbling window in nanoseconds. */
    @Param({"0", "1000000000"})
    public long windowNanos;

    private List<SwitchBatch> batches;

    @Setup
    public void decode() throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(SWITCHES).withShape(8, 20, 10);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        batches = new ArrayList<>();
        SwitchBatchSerde copy = new SwitchBatchSerde();
        SessionDecoder.decodeBatches(f, "h", null, b -> batches.add(copy.deserialize("t", copy.serialize("t", b))), null);
        Files.delete(f);
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public SessionStatistics aggregate() {
        SessionStatistics s = new SessionStatistics(windowNanos);
        for (SwitchBatch b : batches) s.accept(b);
        return s;
    }
}
