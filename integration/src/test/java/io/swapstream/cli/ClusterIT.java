package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.local.Pipeline;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layout docker-compose.yml runs, in this JVM: three KRaft nodes, topics with replication 3 and
 * min.insync.replicas 2. The node leading most of the pipeline's partitions is stopped while a
 * session is being published; leadership moves, and the statistics still equal the offline ones.
 */
class ClusterIT {
    static final String PREFIX = "cl.";

    @TempDir Path dir;

    @Test
    void aLeaderStoppedMidSessionChangesNothing() throws Exception {
        Path trace = dir.resolve("cluster.etl");
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(80_000).withSeed(31).withMode("compact");
        TraceGenerator.generate(trace, o, MaximumWaitReason.forBuild(o.build()));
        SessionStatistics offline = new SessionStatistics(0);
        SessionDecoder.decodeBatches(trace, "db01", null, offline::accept, null);
        List<ThreadStats> expected = offline.wholeSession();

        try (KafkaCluster cluster = KafkaCluster.start(dir.resolve("cluster"));
             Admin admin = Admin.create(Map.of("bootstrap.servers", cluster.bootstrapServers()))) {
            String bootstrap = cluster.bootstrapServers();
            TopicSetup.ensure(admin, PREFIX, 2, (short) 3);
            try (Pipeline p = Pipeline.start(bootstrap, "cluster-it", dir.resolve("state"), PREFIX, 2, (short) 3, 0, 200,
                    Map.of("commit.interval.ms", "100"))) {
                Map<String, TopicDescription> topics = describe(admin);
                for (TopicDescription t : topics.values()) {
                    for (TopicPartitionInfo part : t.partitions()) assertEquals(3, part.replicas().size(), t.name());
                }
                Map<ConfigResource, Config> configs = admin.describeConfigs(topics.keySet().stream()
                        .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList()).all().get();
                configs.forEach((r, c) -> assertEquals("2", c.get("min.insync.replicas").value(), r.name()));
                assertTrue(topics.keySet().stream().anyMatch(n -> n.contains("changelog")), "changelogs replicated too: " + topics.keySet());

                // what moves is partition leadership, not the quorum's: stop a node that leads partitions but
                // is not the active controller (should it become that meanwhile, its stop still ends: KafkaCluster)
                int controller = admin.describeMetadataQuorum().quorumInfo().get().leaderId();
                int victim = busiestLeader(topics, controller);
                // mid-session: the decode stage has written batches of the first session, not all of them
                String first = publish(bootstrap, trace, "db01");
                read(bootstrap, SwapstreamConfig.SWITCH_BATCHES, rs -> !rs.isEmpty());
                cluster.stop(victim);
                // and a second host's session goes in with the node down
                String second = publish(bootstrap, trace, "db02");

                for (String session : List.of(first, second)) {
                    TraceSession done = endOf(bootstrap, session);
                    assertTrue(done.getComplete(), done.toString());
                    assertEquals(0, done.getDeadLetters());
                    Map<String, ThreadStats> latest = new HashMap<>();
                    read(bootstrap, SwapstreamConfig.THREAD_STATS, rs -> {
                        latest.clear();
                        for (ConsumerRecord<String, byte[]> r : rs) {
                            if (r.key().startsWith(session + "/")) latest.put(r.key(), PipelineIT.STATS.deserialize("t", r.value()));
                        }
                        return latest.size() >= expected.size()
                                && expected.stream().allMatch(t -> equalBesidesHost(t, latest.get(session + "/" + t.getThreadId())));
                    });
                    for (ThreadStats t : expected) assertTrue(equalBesidesHost(t, latest.get(session + "/" + t.getThreadId())), t.toString());
                    assertEquals(expected.size(), latest.size());
                }

                for (TopicDescription t : describe(admin).values()) {
                    for (TopicPartitionInfo part : t.partitions()) {
                        assertNotEquals(victim, part.leader() == null ? -1 : part.leader().id(), "leadership moved: " + t.name());
                        assertTrue(part.isr().size() >= 2, t.name() + " keeps two in-sync replicas: " + part.isr());
                    }
                }
            }
        }
    }

    static String publish(String bootstrap, Path trace, String host) throws Exception {
        try (BufferPublisher pub = new BufferPublisher(bootstrap, PREFIX, Map.of())) {
            return pub.publish(trace, host, null, null).session();
        }
    }

    /** The offline rows were computed once under host db01. */
    static boolean equalBesidesHost(ThreadStats offline, ThreadStats online) {
        if (online == null) return false;
        ThreadStats copy = ThreadStats.newBuilder(offline).setHost(online.getHost()).setSession(online.getSession()).build();
        return copy.equals(online);
    }

    static Map<String, TopicDescription> describe(Admin admin) throws Exception {
        Set<String> names = admin.listTopics().names().get().stream()
                .filter(n -> n.startsWith(PREFIX) || n.startsWith("cluster-it")).collect(Collectors.toSet());
        return admin.describeTopics(names).allTopicNames().get();
    }

    /** The node other than {@code except} leading most partitions of the pipeline's topics. */
    static int busiestLeader(Map<String, TopicDescription> topics, int except) {
        Map<Integer, Integer> led = new HashMap<>();
        for (TopicDescription t : topics.values()) {
            for (TopicPartitionInfo p : t.partitions()) {
                if (p.leader().id() != except) led.merge(p.leader().id(), 1, Integer::sum);
            }
        }
        return led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    static TraceSession endOf(String bootstrap, String session) {
        TraceSession[] end = new TraceSession[1];
        read(bootstrap, SwapstreamConfig.SESSIONS, rs -> {
            for (ConsumerRecord<String, byte[]> r : rs) {
                TraceSession s = PipelineIT.SESSIONS.deserialize("t", r.value());
                if (r.key().equals(session) && s.getEndReason() != null) end[0] = s;
            }
            return end[0] != null;
        });
        return end[0];
    }

    static List<ConsumerRecord<String, byte[]>> read(String bootstrap, String suffix,
                                                     Predicate<List<ConsumerRecord<String, byte[]>>> done) {
        return PipelineIT.read(bootstrap, PREFIX + suffix, done);
    }
}
