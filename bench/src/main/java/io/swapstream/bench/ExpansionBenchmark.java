package io.swapstream.bench;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.etw.EtlReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/** Decodes and expands a generated trace held in memory; the score is switches per second. */
public class ExpansionBenchmark extends GeneratedTraceBenchmark {
    @Param({"compact", "cswitch"})
    public String mode;

    private ByteBuffer bytes;

    @Setup
    public void generate() throws IOException {
        bytes = ByteBuffer.wrap(trace(options().withMode(mode)));
    }

    @Benchmark
    @OperationsPerInvocation(SWITCHES)
    public void expand(Blackhole bh) throws IOException {
        try (EtlReader r = EtlReader.of("bench", bytes.duplicate())) {
            SessionDecoder.decodeBatches(r, "h", null, bh::consume, null);
        }
    }
}
