package io.swapstream.bench;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The switch batches of a generated compact trace to Avro bytes ({@code ContextSwitchBatch}, as the
 * decode stage sends them) and back (into one reused batch, as the aggregate reads them); the score
 * is switches per second.
 */
public class SwitchBatchSerdeBenchmark extends GeneratedTraceBenchmark {
    private final SwitchBatchSerde serde = new SwitchBatchSerde();
    private final List<SwitchBatch> batches = new ArrayList<>();
    private final List<byte[]> encoded = new ArrayList<>();
    private SwitchBatch into;
    private int switches;

    @Setup
    public void generate() throws IOException {
        // the decoder reuses its batch: keep copies
        batches(options(), b -> batches.add(serde.deserialize("t", serde.serialize("t", b))));
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
