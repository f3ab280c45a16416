package io.swapstream.bench;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.streams.AggregateTopology;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.streams.DecodeTopology;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.JvmCpu;
import io.swapstream.local.Pipeline;
import io.swapstream.local.RollupRun;
import io.swapstream.local.ServiceException;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreTypes;

/**
 * The single-pipeline benchmark of {@code swapstream bench}: a trace through the stages in one JVM, round by round, each
 * checked against the offline figures of the same trace, then the rollup stage over every round's rows.
 */
public final class PipelineRounds {
    /** Where the last round read the batches topic to: the next round's batches are those after. */
    private Map<TopicPartition, Long> batchesReadTo;

    /**
     * The rollup stage over every final window row the rounds wrote, from the topic's start, after them (so it takes no CPU
     * from their figures): its rows a second and its stream thread's CPU a row, beside the aggregate's CPU a row it wrote.
     */
    public static String rollup(String bootstrap, String prefix, Path state, long timeoutMs, List<Pipeline.Times> runs) throws Exception {
        long windowRows = 0;
        long allRows = 0;
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(BenchMeasures.consumerConfig(bootstrap), new StringDeserializer(), new ByteArrayDeserializer())) {
            String topic = prefix + SwapstreamConfig.THREAD_STATS;
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            var serde = new io.swapstream.schemas.serde.SingleObjectAvroSerde<>(ThreadStats.class);
            while (parts.stream().anyMatch(p -> c.position(p) < end.get(p))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    allRows++;
                    ThreadStats t = serde.deserialize(r.topic(), r.value());
                    if (t.getFinal$() && r.key().endsWith("/" + t.getWindowStartNanos())) windowRows++;
                }
            }
        }
        String appId = "bench-rollup-" + prefix;
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        long t0 = System.nanoTime(); // its start included: it takes rows as soon as it runs
        // the rounds are one trace as several hosts over the same minutes, read at once: a day's grace merges them all
        Map<String, String> grace = Map.of(SwapstreamConfig.ROLLUP_GRACE_MS, String.valueOf(Duration.ofDays(1).toMillis()));
        try (RollupRun rollup = RollupRun.start(bootstrap, appId, state, prefix, 4, (short) 1, grace, deadline, true)) {
            rollup.awaitTaken(windowRows, deadline);
            double secs = BenchMeasures.secs(t0);
            double cpu = BenchMeasures.threadCpu(appId + "-rollup-");
            double aggregateCpu = runs.stream().mapToDouble(Pipeline.Times::aggregateCpuSecs).sum();
            return String.format("rollup stage: %d final thread-window rows (each into both roll-ups) in %.2f s, %.0f rows/s, %.1f µs CPU a row"
                    + " (its stream thread; its start included); the aggregate's stream thread: %.1f µs CPU a row it wrote (%d rows, windows and whole-session)",
                    windowRows, secs, windowRows / secs, cpu / windowRows * 1e6, aggregateCpu / allRows * 1e6, allRows);
        }
    }

    /** The offline figures, and its whole-session rows: threads and switch-ins, what each pipeline round must match. */
    public record Offline(long switches, double decodeSecs, double statsSecs, long threads, long switchIns) {}

    public static Offline offline(Path trace) throws java.io.IOException {
        long[] n = {0};
        long t0 = System.nanoTime();
        SessionDecoder.decodeBatches(trace, "bench", null, b -> n[0] += b.count(), null);
        double decodeSecs = BenchMeasures.secs(t0);
        SessionStatistics stats = new SessionStatistics(60_000_000_000L);
        t0 = System.nanoTime();
        SessionDecoder.decodeBatches(trace, "bench", null, stats::accept, null);
        List<ThreadStats> whole = stats.wholeSession();
        stats.windowed();
        double statsSecs = BenchMeasures.secs(t0);
        return new Offline(n[0], decodeSecs, statsSecs, whole.size(), whole.stream().mapToLong(ThreadStats::getSwitchInCount).sum());
    }

    /** One session through the running pipeline: ingest, decode, aggregate, and when each was done. */
    public Pipeline.Times round(String bootstrap, String prefix, Pipeline pipeline, String host, Path trace, long timeoutMs, Offline expected) throws Exception {
        JvmCpu before = JvmCpu.now();
        double decodeCpu0 = BenchMeasures.threadCpu("bench-" + prefix + "-decode-");
        double aggregateCpu0 = BenchMeasures.threadCpu("bench-" + prefix + "-aggregate-");
        long t0 = System.nanoTime();
        BufferPublisher.Published published;
        try (BufferPublisher publisher = new BufferPublisher(bootstrap, prefix, Map.of())) {
            published = publisher.publish(trace, host, null, null);
        }
        double ingested = BenchMeasures.secs(t0);
        long deadline = t0 + timeoutMs * 1_000_000L;
        while (!ended(pipeline.decode, DecodeTopology.PROGRESS_STORE, published.session(), true)) pause(deadline);
        double decoded = BenchMeasures.secs(t0);
        double decodeCpu = BenchMeasures.threadCpu("bench-" + prefix + "-decode-") - decodeCpu0;
        while (!ended(pipeline.aggregate, AggregateTopology.SESSIONS_STORE, published.session(), false)) pause(deadline);
        double aggregated = BenchMeasures.secs(t0);
        double aggregateCpu = BenchMeasures.threadCpu("bench-" + prefix + "-aggregate-") - aggregateCpu0;
        JvmCpu used = JvmCpu.now().minus(before);
        BenchMeasures.TopicSize batches = BenchMeasures.topicSize(bootstrap, prefix + SwapstreamConfig.SWITCH_BATCHES, batchesReadTo);
        batchesReadTo = batches.end();
        // a stage that stopped after its store had the session's end would still have been timed: its rows tell
        checkFinalRows(bootstrap, prefix, published.session(), expected, pipeline, deadline);
        return new Pipeline.Times(ingested, decoded, aggregated, published.buffers() + 1, published.bytes(), batches.records(), batches.bytes(),
                decodeCpu, aggregateCpu, used);
    }

    private static void pause(long deadline) throws InterruptedException {
        if (System.nanoTime() > deadline) throw new ServiceException("the pipeline did not finish within --timeout");
        Thread.sleep(20);
    }

    /**
     * Waits until the rows topic holds, committed, the session's final whole-session rows, and fails
     * unless there is one for each thread offline found, with as many switch-ins in all.
     */
    private static void checkFinalRows(String bootstrap, String prefix, String session, Offline expected, Pipeline pipeline,
                                       long deadline) {
        Map<Integer, Long> whole = new HashMap<>();
        Pipeline.readFinalRows(BenchMeasures.consumerConfig(bootstrap), prefix, Map.of(session, (int) expected.threads()), pipeline.aggregate,
                deadline, (t, wholeSession) -> {
                    if (wholeSession) whole.put(t.getThreadId(), t.getSwitchInCount());
                });
        long switchIns = whole.values().stream().mapToLong(Long::longValue).sum();
        if (whole.size() != expected.threads() || switchIns != expected.switchIns()) {
            throw new ServiceException("the pipeline's whole-session rows differ from offline: " + whole.size() + " threads and "
                    + switchIns + " switch-ins, offline " + expected.threads() + " and " + expected.switchIns());
        }
    }

    private static boolean ended(KafkaStreams streams, String store, String session, boolean decode) {
        try {
            byte[] v = streams.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.<String, byte[]>keyValueStore()))
                    .get(session);
            return decode ? DecodeTopology.hasEnded(v) : AggregateTopology.finishedSwitches(v) != null;
        } catch (InvalidStateStoreException e) {
            return false;
        }
    }
}
