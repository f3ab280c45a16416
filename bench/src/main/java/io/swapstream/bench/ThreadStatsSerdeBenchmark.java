package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The 1 s window rows of a generated trace ({@code ThreadStats}, as the aggregate writes them to its
 * query store and the thread-stats topic) to single-object Avro bytes and back; the score is rows
 * per second.
 */
public class ThreadStatsSerdeBenchmark extends GeneratedTraceBenchmark {
    private final SingleObjectAvroSerde<ThreadStats> serde = new SingleObjectAvroSerde<>(ThreadStats.class);
    private final List<ThreadStats> rows = new ArrayList<>();
    private final List<byte[]> encoded = new ArrayList<>();

    @Setup
    public void generate() throws IOException {
        SessionStatistics stats = new SessionStatistics(1_000_000_000L);
        batches(options(), stats::accept);
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
