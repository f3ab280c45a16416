package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.decode.MaximumWaitReason;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
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
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The 1 s window rows of a generated trace ({@code ThreadStats}, as the aggregate writes them to its
 * query store and the thread-stats topic) to single-object Avro bytes and back; the score is rows
 * per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ThreadStatsSerdeBenchmark {
    private final SingleObjectAvroSerde<ThreadStats> serde = new SingleObjectAvroSerde<>(ThreadStats.class);
    private final List<ThreadStats> rows = new ArrayList<>();
    private final List<byte[]> encoded = new ArrayList<>();

    @Setup
    public void generate() throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(200_000).withShape(8, 20, 10);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        SessionStatistics stats = new SessionStatistics(1_000_000_000L);
        SessionDecoder.decodeBatches(f, "h", null, stats::accept, null);
        Files.delete(f);
        rows.addAll(stats.windowed());
        for (ThreadStats t : rows) encoded.add(serde.serialize("t", t));
    }

    @Benchmark
    public void encode(Blackhole bh) {
        for (ThreadStats t : rows) bh.consume(serde.serialize("t", t));
    }

    @Benchmark
    public void decode(Blackhole bh) {
        for (byte[] b : encoded) bh.consume(serde.deserialize("t", b));
    }
}
