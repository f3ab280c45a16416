package io.swapstream.bench;

import io.swapstream.decode.MaximumWaitReason;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.etw.EtlReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.openjdk.jmh.infra.Blackhole;

/** Decodes and expands a generated trace held in memory; the score is switches per second. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ExpansionBenchmark {
    static final int SWITCHES = 200_000;

    @Param({"compact", "cswitch"})
    public String mode;

    private ByteBuffer bytes;

    @Setup
    public void generate() throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(SWITCHES).withShape(8, 20, 10).withMode(mode);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        bytes = ByteBuffer.wrap(Files.readAllBytes(f));
        Files.delete(f);
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void expand(Blackhole bh) throws IOException {
        try (EtlReader r = EtlReader.of("bench", bytes.duplicate())) {
            SessionDecoder.decodeBatches(r, "h", null, bh::consume, null);
        }
    }
}
