package io.swapstream.bench;

import io.swapstream.etw.EtlReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Walks every buffer and event of a real file held in memory (decompressing where needed).
 * The aux counters give events/s and bytes/s on one core.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class FileWalkBenchmark {
    @Param({"perfview__diaghub.etl", "perfview__net.4.5.2.x64.etl"})
    public String file;

    private ByteBuffer bytes;
    private long sink;

    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Counts {
        public long events;
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            events = 0;
            bytes = 0;
        }
    }

    @Setup
    public void load() throws IOException {
        Path dir = Path.of(System.getProperty("swapstream.testdata", "../shared/testdata/etl"));
        bytes = ByteBuffer.wrap(Files.readAllBytes(dir.resolve(file)));
    }

    @Benchmark
    public long walk(Counts counts) throws IOException {
        long[] n = new long[1];
        try (EtlReader r = EtlReader.of(file, bytes.duplicate())) {
            while (r.next()) {
                r.walk(ev -> {
                    n[0]++;
                    sink += ev.hookId();
                });
            }
            counts.bytes += r.length();
        }
        counts.events += n[0];
        return sink;
    }
}
