package io.swapstream.bench;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the project's benchmarks share (JMH reads these annotations from a benchmark's superclass): a
 * throughput score per second, a few short iterations in one fork, and a trace from the generator.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public abstract class GeneratedTraceBenchmark {
    /** Switches of the generated trace. */
    static final int SWITCHES = 200_000;

    /** The generator's options for a trace of {@link #SWITCHES} switches on 8 processors, 20 processes of 10 threads. */
    static GeneratorOptions options() {
        return GeneratorOptions.defaults().withSwitches(SWITCHES).withShape(8, 20, 10);
    }

    /** The bytes of a trace generated with {@code o}. */
    static byte[] trace(GeneratorOptions o) throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        try {
            TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
            return Files.readAllBytes(f);
        } finally {
            Files.delete(f);
        }
    }

    /** The batches of a trace generated with {@code o}, each to {@code each} (the decoder reuses its batch: copy what you keep). */
    static void batches(GeneratorOptions o, Consumer<SwitchBatch> each) throws IOException {
        Path f = Files.createTempFile("bench", ".etl");
        try {
            TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
            SessionDecoder.decodeBatches(f, "h", null, each, null);
        } finally {
            Files.delete(f);
        }
    }
}
