package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.Directories;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local cluster of three {@code swapstream broker} processes (replication 3, min.insync.replicas 2),
 * and decode, aggregate and {@code ingest --watch} as processes of their own, on a trace that grows
 * as a logger writes it. Mid-session, in turn: the broker that is the active controller and leads
 * the session's partitions is killed with SIGKILL and started again on its data; decode is killed
 * and started again; aggregate is killed, its state directory deleted, and started again; ingest is
 * killed and started again. The final rows must equal the offline statistics of the finished file,
 * each once; every buffer, batch and end record must be on its topic once.
 */
class ClusterFaultIT {
    @TempDir Path dir;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void faultsOfABrokerAndOfEveryStageLoseAndDoubleNothing() throws Exception {
        int[] client = {EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort()};
        int[] controller = {EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort(), EmbeddedKafkaBroker.freePort()};
        String voters = "1@127.0.0.1:" + controller[0] + ",2@127.0.0.1:" + controller[1] + ",3@127.0.0.1:" + controller[2];
        StageProcess[] brokers = new StageProcess[3];
        // a node's start waits for a quorum of the controllers: all three first, then each one's word
        for (int i = 0; i < 3; i++) brokers[i] = broker(i + 1, client[i], controller[i], voters);
        for (StageProcess b : brokers) b.awaitLog("broker: running", Duration.ofSeconds(90));
        String servers = "127.0.0.1:" + client[0] + ",127.0.0.1:" + client[1] + ",127.0.0.1:" + client[2];
        KafkaBroker.Bootstrap k = new KafkaBroker.Bootstrap(servers, "three swapstream broker processes");
        LiveSessionIT live = new LiveSessionIT();
        live.dir = dir;
        Path whole = live.trace(300_000);
        Map<String, ThreadStats> expected = LiveSessionIT.offline(whole, "fault");
        String session = BufferPublisher.sessionOf(whole, "fault");
        Path watched = Files.createDirectories(dir.resolve("traces"));
        Path decodeState = dir.resolve("decode-state");
        Path aggregateState = dir.resolve("aggregate-state");
        StageProcess decode = live.decode(k, decodeState);
        StageProcess aggregate = live.aggregate(k, aggregateState);
        StageProcess ingest = live.ingest(k, watched, LiveSessionIT.GATED_QUIET);
        Map<String, Double> backAfter = new TreeMap<>();
        Path file = watched.resolve("fault.etl");
        // the writer waits at each fifth of the file for that fault to begin: each one mid-file, however slow the machine
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers)); LiveSessionIT.Rows rows = live.new Rows(k);
             GatedReplay writer = GatedReplay.start(whole, file, 40, 0.2, 0.4, 0.6, 0.8)) {
            assertEquals(3, admin.describeCluster().nodes().get().size());

            writer.awaitAt(0);
            int node = leadEverythingOfTheSession(admin, live.prefix, session);
            brokers[node - 1].kill9();
            writer.pass(0);
            Thread.sleep(2000);
            brokers[node - 1] = broker(node, client[node - 1], controller[node - 1], voters).awaitLog("broker: running",
                    Duration.ofSeconds(90));

            writer.awaitAt(1);
            decode.kill9();
            writer.pass(1);
            long t0 = System.nanoTime();
            decode = live.decode(k, decodeState);
            backAfter.put("decode", awaitHealth(decode, t0));

            writer.awaitAt(2);
            aggregate.kill9();
            writer.pass(2);
            Directories.deleteTree(aggregateState);
            t0 = System.nanoTime();
            aggregate = live.aggregate(k, aggregateState);
            backAfter.put("aggregate, its state deleted", awaitHealth(aggregate, t0));

            writer.awaitAt(3);
            ingest.kill9();
            writer.pass(3);
            ingest = live.ingest(k, watched, LiveSessionIT.GATED_QUIET);

            writer.join();
            ingest = live.finish(k, watched, ingest, file);
            rows.await(expected, Duration.ofSeconds(240));
            LiveSessionIT.assertSameFinals(expected, rows);
            backAfter.forEach((stage, s) -> System.out.printf("ClusterFaultIT: %s answered /health 200 %.1f s after its restart%n", stage, s));
            System.out.printf("ClusterFaultIT: killed node %d, the active controller and the leader of the session's partitions%n", node);
            assertEachBufferOnce(servers, live.prefix, session);
            assertEachBatchOnce(servers, live.prefix, session);
            assertOneEndRecord(servers, live.prefix, session);
        } finally {
            ingest.close();
            decode.close();
            aggregate.close();
            for (StageProcess b : brokers) b.close();
        }
    }

    StageProcess broker(int id, int port, int controllerPort, String voters) throws Exception {
        return StageProcess.start(dir.resolve("broker" + id + ".log"), "broker", "--node-id", String.valueOf(id), "--port",
                String.valueOf(port), "--controller-port", String.valueOf(controllerPort), "--controllers", voters, "--data-dir",
                dir.resolve("node" + id).toString());
    }

    /**
     * Makes the active controller the leader of the session's partition of each pipeline topic (first
     * replica, then a preferred-leader election), and returns its id.
     */
    static int leadEverythingOfTheSession(Admin admin, String prefix, String session) throws Exception {
        int leader = admin.describeMetadataQuorum().quorumInfo().get().leaderId();
        List<String> topics = new ArrayList<>();
        for (String t : List.of(SwapstreamConfig.RAW_BUFFERS, SwapstreamConfig.SWITCH_BATCHES, SwapstreamConfig.THREAD_STATS,
                SwapstreamConfig.SESSIONS)) {
            topics.add(prefix + t);
        }
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
            int p = SessionPartitioner.partition(session, d.partitions().size());
            List<Integer> replicas = new ArrayList<>(d.partitions().get(p).replicas().stream().map(n -> n.id()).toList());
            replicas.remove(Integer.valueOf(leader));
            replicas.add(0, leader);
            moves.put(new TopicPartition(d.name(), p), Optional.of(new NewPartitionReassignment(replicas)));
        }
        admin.alterPartitionReassignments(moves).all().get();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                admin.electLeaders(ElectionType.PREFERRED, moves.keySet()).all().get();
            } catch (java.util.concurrent.ExecutionException e) {
                // ElectionNotNeeded where it leads already
            }
            boolean all = true;
            for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
                int p = SessionPartitioner.partition(session, d.partitions().size());
                all &= d.partitions().get(p).leader() != null && d.partitions().get(p).leader().id() == leader;
            }
            if (all) return leader;
            if (System.nanoTime() > deadline) throw new AssertionError("node " + leader + " did not take the session's partitions");
            Thread.sleep(200);
        }
    }

    /** Seconds from {@code t0} until the stage's /health answers 200. */
    double awaitHealth(StageProcess stage, long t0) throws Exception {
        return awaitHealth(http, stage, t0);
    }

    /** Seconds from {@code t0} until {@code stage} answers /health 200 (restoring its state first: a bound of 5 minutes, not a timing). */
    static double awaitHealth(HttpClient http, StageProcess stage, long t0) throws Exception {
        URI uri = URI.create("http://" + stage.http() + "/health");
        long deadline = t0 + Duration.ofMinutes(5).toNanos();
        while (true) {
            try {
                if (http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200) {
                    return (System.nanoTime() - t0) / 1e9;
                }
            } catch (java.io.IOException e) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) throw new AssertionError("no /health 200 from " + uri + " within 5 minutes");
            Thread.sleep(100);
        }
    }

    /** Every record of {@code topic}, read committed, from its start to its end now. */
    static List<ConsumerRecord<String, byte[]>> readAll(String servers, String topic) {
        Map<String, Object> c = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers, ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed", ConsumerConfig.GROUP_ID_CONFIG, "check-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest");
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (parts.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) throw new AssertionError("could not read " + topic + " to its end");
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /** Each of the session's buffer indexes once on the raw-buffers topic, from 0 with no gap, and one end marker. */
    static void assertEachBufferOnce(String servers, String prefix, String session) {
        Map<Long, Integer> seen = new TreeMap<>();
        long ends = 0;
        for (ConsumerRecord<String, byte[]> r : readAll(servers, prefix + SwapstreamConfig.RAW_BUFFERS)) {
            if (!session.equals(r.key())) continue;
            if (r.headers().lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) != null) {
                ends++;
                continue;
            }
            Header h = r.headers().lastHeader(SwapstreamConfig.HEADER_BUFFER_INDEX);
            seen.merge(Long.parseLong(new String(h.value(), StandardCharsets.UTF_8)), 1, Integer::sum);
        }
        assertEquals(0, seen.values().stream().filter(n -> n > 1).count(), "buffers on the topic more than once");
        assertEquals(seen.size() - 1, seen.keySet().stream().mapToLong(Long::longValue).max().orElse(-1), "buffer indexes with a gap");
        assertEquals(1, ends, "end markers of the session");
    }

    /** Each of the session's batch numbers once, from 0 with no gap. */
    static void assertEachBatchOnce(String servers, String prefix, String session) {
        Map<Long, Integer> seen = new TreeMap<>();
        for (ConsumerRecord<String, byte[]> r : readAll(servers, prefix + SwapstreamConfig.SWITCH_BATCHES)) {
            if (!session.equals(r.key())) continue;
            Header h = r.headers().lastHeader(SwapstreamConfig.HEADER_BATCH_SEQUENCE);
            seen.merge(Long.parseLong(new String(h.value(), StandardCharsets.UTF_8)), 1, Integer::sum);
        }
        long twice = seen.values().stream().filter(n -> n > 1).count();
        System.out.printf("%s: %d batches on %s, %d of them more than once%n", session, seen.size(),
                prefix + SwapstreamConfig.SWITCH_BATCHES, twice);
        assertEquals(0, twice, "batches on the topic more than once");
        assertEquals(seen.size() - 1, seen.keySet().stream().mapToLong(Long::longValue).max().orElse(-1), "batch numbers with a gap");
    }

    static void assertOneEndRecord(String servers, String prefix, String session) {
        long ends = 0;
        for (ConsumerRecord<String, byte[]> r : readAll(servers, prefix + SwapstreamConfig.SESSIONS)) {
            if (!session.equals(r.key())) continue;
            TraceSession t = LiveSessionIT.SESSIONS.deserialize("t", r.value());
            if (t.getEndReason() != null) ends++;
        }
        assertEquals(1, ends, "end records of the session");
    }
}
