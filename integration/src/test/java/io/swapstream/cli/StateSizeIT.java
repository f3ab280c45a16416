package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.streams.AggregateTopology;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.streams.DecodeTopology;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state of an open session is bounded by processors and threads, not by the length of the
 * trace: the decode and aggregate stores while a session runs, and their changelogs once the broker
 * has compacted them, for a trace ten times longer stay within twice the shorter one's.
 */
@ExtendWith(KafkaBroker.class)
class StateSizeIT {
    /** The decode stage's stores of a session's parts (checkpoint, redo entries, early buffers): an ended session has none. */
    static final List<String> DECODE_PART_STORES = List.of("decode-checkpoints", "decode-redo", "decode-early");

    @TempDir Path dir;

    /** Peak store bytes (redo entries included: offsets of the records since the last checkpoint or flush), and changelog bytes. */
    record Sizes(long decodeStore, long aggregateStore, long changelogs) {}

    @Test
    void aTenTimesLongerTraceKeepsTheStateFlat(KafkaBroker.Bootstrap kafka) throws Exception {
        Sizes shorter = run(kafka, 130_000);
        Sizes longer = run(kafka, 1_300_000);
        System.out.printf("StateSizeIT: peak decode store %d / %d bytes, peak aggregate store %d / %d bytes,"
                + " changelogs after compaction %d / %d bytes (2 / 22 minutes of trace)%n",
                shorter.decodeStore(), longer.decodeStore(), shorter.aggregateStore(), longer.aggregateStore(),
                shorter.changelogs(), longer.changelogs());
        // stores are sampled every 100 ms, so a short run's peak may be missed by a few flushes' worth:
        // 256 KiB of slack, far below what state growing with the trace would add (ten times the shorter's)
        long sampling = 256 * 1024;
        assertTrue(longer.decodeStore() <= 2 * shorter.decodeStore() + sampling, longer + " against " + shorter);
        assertTrue(longer.aggregateStore() <= 2 * shorter.aggregateStore() + sampling, longer + " against " + shorter);
        // the cleaner never compacts a changelog's active segment, and when it gets to the others
        // varies from run to run: up to a segment per stage more than the compacted state, whatever
        // the length of the session
        long slack = 2L * TopicSetup.CHANGELOG_SEGMENT_BYTES;
        assertTrue(longer.changelogs() <= 2 * shorter.changelogs() + slack, longer + " against " + shorter);
    }

    /** A trace of a fixed set of threads (none exits, so the threads seen do not grow with time) through the pipeline. */
    Sizes run(KafkaBroker.Bootstrap kafka, long switches) throws Exception {
        String prefix = "size" + UUID.randomUUID().toString().substring(0, 6) + ".";
        String appId = "size-" + prefix;
        Path f = dir.resolve(switches + ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withShape(4, 2, 2).withSwitches(switches).withBufferSize(8 * 1024)
                .withExitRate(0);
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
            long decodeMax = 0;
            long aggregateMax = 0;
            try (Pipeline p = Pipeline.start(kafka.servers(), appId, dir.resolve(prefix), prefix, 1, (short) 1, 60_000_000_000L, 1000,
                    // checkpoints and flushes every 16 records: both traces go through many of each; the
                    // stats store keeps two closed windows, which both traces pass (2 and 22 one-minute windows)
                    Map.of("commit.interval.ms", "300", SwapstreamConfig.DECODE_CHECKPOINT_BUFFERS, "16",
                            SwapstreamConfig.AGGREGATE_FLUSH_BATCHES, "16", SwapstreamConfig.AGGREGATE_KEEP_WINDOWS, "2"))) {
                Thread publisher = new Thread(() -> {
                    try (BufferPublisher b = new BufferPublisher(kafka.servers(), prefix, Map.of())) {
                        b.publish(f, "size", null, null);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                publisher.start();
                String session = BufferPublisher.sessionOf(f, "size");
                while (true) {
                    long decodeNow = bytes(p.decode, DecodeTopology.PROGRESS_STORE);
                    for (String store : StateSizeIT.DECODE_PART_STORES) decodeNow += bytes(p.decode, store);
                    decodeMax = Math.max(decodeMax, decodeNow);
                    aggregateMax = Math.max(aggregateMax, bytes(p.aggregate, AggregateTopology.SESSIONS_STORE)
                            + bytes(p.aggregate, AggregateTopology.ACCUMULATORS_STORE) + bytes(p.aggregate, AggregateTopology.REDO_STORE)
                            + bytes(p.aggregate, AggregateTopology.STATS_STORE));
                    Long done = finished(p.aggregate, session);
                    if (done != null) {
                        assertEquals(switches, (long) done, "every switch counted");
                        break;
                    }
                    Thread.sleep(100);
                }
                publisher.join();
            }
            long changelogs = compactedChangelogs(admin, appId).values().stream().mapToLong(Long::longValue).sum();
            return new Sizes(decodeMax, aggregateMax, changelogs);
        }
    }

    static long bytes(KafkaStreams streams, String store) throws java.io.IOException {
        try {
            long n = 0;
            var s = streams.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.<String, Object>keyValueStore()));
            try (KeyValueIterator<String, Object> it = s.all()) {
                while (it.hasNext()) {
                    KeyValue<String, Object> kv = it.next();
                    n += kv.key.length() + (kv.value instanceof byte[] b ? b.length : ((ThreadStats) kv.value).toByteBuffer().remaining());
                }
            }
            return n;
        } catch (InvalidStateStoreException e) {
            return 0; // rebalancing: the next sample counts
        }
    }

    static java.util.List<String> keys(KafkaStreams streams, String store) {
        java.util.List<String> keys = new java.util.ArrayList<>();
        var s = streams.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.<String, Object>keyValueStore()));
        try (KeyValueIterator<String, Object> it = s.all()) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    static Long finished(KafkaStreams aggregate, String session) {
        try {
            return AggregateTopology.finishedSwitches(aggregate.store(StoreQueryParameters.fromNameAndType(
                    AggregateTopology.SESSIONS_STORE, QueryableStoreTypes.<String, byte[]>keyValueStore())).get(session));
        } catch (InvalidStateStoreException e) {
            return null;
        }
    }

    /** The bytes of the application's changelogs on the broker, once the log cleaner has compacted them. */
    static Map<String, Long> compactedChangelogs(Admin admin, String appId) throws Exception {
        long last = -1;
        Map<String, Long> lastByTopic = Map.of();
        long stableSince = System.nanoTime();
        long deadline = System.nanoTime() + 40_000_000_000L;
        while (System.nanoTime() < deadline) {
            long n = 0;
            Map<String, Long> byTopic = new java.util.TreeMap<>();
            for (Map<String, LogDirDescription> byDir : admin.describeLogDirs(List.of(1)).allDescriptions().get().values()) {
                for (LogDirDescription d : byDir.values()) {
                    for (var e : d.replicaInfos().entrySet()) {
                        if (e.getKey().topic().startsWith(appId) && e.getKey().topic().endsWith("-changelog")) {
                            n += e.getValue().size();
                            byTopic.merge(e.getKey().topic().substring(appId.length() + 1), e.getValue().size(), Long::sum);
                        }
                    }
                }
            }
            lastByTopic = byTopic;
            if (n != last) {
                last = n;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > 6_000_000_000L) {
                return byTopic;
            }
            Thread.sleep(500);
        }
        return lastByTopic;
    }
}
