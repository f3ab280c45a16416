package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.RegistryAvroSerde;
import io.swapstream.schemas.serde.SchemaRegistry;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serde;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The 1 s window rows of a generated trace ({@code ThreadStats}, as the aggregate writes them to its
 * query store and the thread-stats topic) to Avro bytes and back; the score is rows per second.
 * {@code framing=registry} writes Confluent's wire format through the registry of
 * {@code -Dswapstream.schema.registry=URL} and prints the requests it sent while measured.
 */
public class ThreadStatsSerdeBenchmark extends GeneratedTraceBenchmark {
    @Param({"single-object"})
    public String framing;

    private static final String TOPIC = "bench.thread-stats";
    private Serde<ThreadStats> serde;
    private SchemaRegistry registry;
    private long requestsAtStart;
    private final List<ThreadStats> rows = new ArrayList<>();
    private final List<byte[]> encoded = new ArrayList<>();

    @Setup
    public void generate() throws IOException {
        if (framing.equals("registry")) {
            String url = System.getProperty("swapstream.schema.registry");
            if (url == null) throw new IllegalStateException("framing=registry needs -Dswapstream.schema.registry=URL");
            registry = SchemaRegistry.of(Map.of(SwapstreamConfig.SCHEMA_REGISTRY_URL, url));
            serde = new RegistryAvroSerde<>(ThreadStats.class, registry);
        } else {
            serde = new SingleObjectAvroSerde<>(ThreadStats.class);
        }
        SessionStatistics stats = new SessionStatistics(1_000_000_000L);
        batches(options(), stats::accept);
        rows.addAll(stats.windowed());
        long bytes = 0;
        for (ThreadStats t : rows) {
            byte[] b = serde.serializer().serialize(TOPIC, t);
            bytes += b.length;
            encoded.add(b);
        }
        serde.deserializer().deserialize(TOPIC, encoded.get(0));
        if (registry != null) requestsAtStart = registry.requests();
        System.out.printf("%n%s: %d rows, %.1f bytes a row%n", framing, rows.size(), (double) bytes / rows.size());
    }

    @TearDown
    public void requests() {
        if (registry != null) System.out.printf("%nregistry requests while measured: %d%n", registry.requests() - requestsAtStart);
    }

    @Benchmark
    public void encode(Blackhole bh) {
        for (ThreadStats t : rows) bh.consume(serde.serializer().serialize(TOPIC, t));
    }

    @Benchmark
    public void decode(Blackhole bh) {
        for (byte[] b : encoded) bh.consume(serde.deserializer().deserialize(TOPIC, b));
    }
}
