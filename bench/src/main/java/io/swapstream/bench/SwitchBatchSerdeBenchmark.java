package io.swapstream.bench;

import io.swapstream.decode.MaximumWaitReason;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.SwitchBatch;
import io.swapstream.decode.SwitchBatchSerde;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The switch batches of a generated compact trace to Avro bytes ({@code ContextSwitchBatch}, as the
 * decode stage sends them) and back (into one reused batch, as the aggregate reads them); the score
 * is switches per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SwitchBatchSerdeBenchmark {
    static final int SWITCHES = 200_000;

    private final SwitchBatchSerde serde = new SwitchBatchSerde();
    private final List<SwitchBatch> batches = new ArrayList<>();
    private final List<byte[]> encoded = new ArrayList<>();
    private SwitchBatch into;
    private int switches;

    @Setup
    public void generate() throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(SWITCHES).withShape(8, 20, 10);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        // the decoder reuses its batch: keep copies
        SessionDecoder.decodeBatches(f, "h", null, b -> batches.add(serde.deserialize("t", serde.serialize("t", b))), null);
        Files.delete(f);
        for (SwitchBatch b : batches) {
            encoded.add(serde.serialize("t", b));
            switches += b.count();
        }
        if (switches != SWITCHES) throw new IllegalStateException(switches + " switches, not " + SWITCHES);
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void encode(Blackhole bh) {
        for (SwitchBatch b : batches) bh.consume(serde.serialize("t", b));
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void decode(Blackhole bh) {
        for (byte[] b : encoded) bh.consume(into = serde.deserialize("t", b, into));
    }
}
