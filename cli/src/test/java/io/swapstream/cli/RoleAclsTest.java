package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.aggregate.rollup.streams.RollupSettings;
import io.swapstream.cli.kafka.AclsCommand;
import io.swapstream.cli.kafka.RoleAcls.Role;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.ingest.WatcherIds;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import io.swapstream.schemas.RecordTopics;
import io.swapstream.schemas.SwapstreamConfig;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each role's ACLs against what its topology and clients touch: nothing missing, nothing more. */
class RoleAclsTest {
    static final String PREFIX = "acl.";
    static final String APP = "app";
    static final RoleAcls.Scope SCOPE = new RoleAcls.Scope(PREFIX, APP, null, null);

    @TempDir Path state;

    /** The topics a stage's topology reads and writes, and its internal topics (changelogs, repartition topics). */
    record Touches(Set<String> sources, Set<String> sinks, Set<String> internal) {}

    Touches touches(String stage) {
        Properties config = StageConfig.streams(stage, "127.0.0.1:9", APP, state.resolve(stage), PREFIX, (short) 1, Map.of());
        Topology t = switch (stage) {
            case StageConfig.DECODE -> Pipeline.decodeTopology(config);
            case StageConfig.AGGREGATE -> Pipeline.aggregateTopology(config, new io.swapstream.aggregate.streams.RowIndexes());
            default -> Pipeline.rollupTopology(config, null);
        };
        Set<String> sources = new TreeSet<>(), sinks = new TreeSet<>(), changelogs = new TreeSet<>();
        for (TopologyDescription.Subtopology sub : t.describe().subtopologies()) {
            for (TopologyDescription.Node n : sub.nodes()) {
                if (n instanceof TopologyDescription.Source s) sources.addAll(s.topicSet());
                if (n instanceof TopologyDescription.Sink s) {
                    assertTrue(s.topic() != null, stage + ": a sink with a topic chosen per record escapes the ACLs' list");
                    sinks.add(s.topic());
                }
                if (n instanceof TopologyDescription.Processor p) {
                    p.stores().forEach(store -> changelogs.add(config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + "-" + store + "-changelog"));
                }
            }
        }
        assertFalse(sources.isEmpty());
        // a repartition topic is described by its name within the application
        String app = config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + "-";
        for (Set<String> topics : List.of(sources, sinks)) {
            for (String name : List.copyOf(topics)) {
                if (!name.startsWith(PREFIX)) {
                    topics.remove(name);
                    changelogs.add(app + name);
                }
            }
        }
        return new Touches(sources, sinks, changelogs);
    }

    static Set<String> names(List<String> suffixes) {
        Set<String> s = new TreeSet<>();
        suffixes.forEach(x -> s.add(SwapstreamConfig.topic(PREFIX, x)));
        return s;
    }

    static boolean allows(List<AclBinding> bindings, ResourceType type, String name, AclOperation op) {
        return bindings.stream().anyMatch(b -> b.pattern().resourceType() == type && b.entry().operation() == op
                && (b.pattern().patternType() == PatternType.LITERAL ? b.pattern().name().equals(name) : name.startsWith(b.pattern().name())));
    }

    @Test
    void eachStageReadsItsTopologysSourcesAndWritesItsSinksAndNothingElse() {
        for (String stage : List.of(StageConfig.DECODE, StageConfig.AGGREGATE, StageConfig.ROLLUP)) {
            Role role = RoleAcls.ofStage(stage);
            Touches t = touches(stage);
            Set<String> reads = new TreeSet<>(t.sources());
            if (role == Role.ROLLUP) {
                // its /metrics feed reads its own outputs, in a group of its own
                RollupSettings s = RollupSettings.from(Map.of(SwapstreamConfig.TOPIC_PREFIX, PREFIX));
                reads.add(s.processes().name());
                reads.add(s.hosts().name());
            }
            assertEquals(reads, names(RoleAcls.READS.get(role)), stage + " reads");
            assertEquals(t.sinks(), names(RoleAcls.WRITES.get(role)), stage + " writes");
            List<AclBinding> b = RoleAcls.bindings(role, "User:" + stage, SCOPE);
            String app = StageConfig.applicationId(APP, stage);
            for (String changelog : t.internal()) {
                for (AclOperation op : List.of(AclOperation.CREATE, AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS)) {
                    assertTrue(allows(b, ResourceType.TOPIC, changelog, op), stage + ": " + op + " on " + changelog);
                }
            }
            assertTrue(allows(b, ResourceType.GROUP, app, AclOperation.READ), stage + "'s group");
            // exactly-once v2: <application.id>-<process id>-<thread index>
            assertTrue(allows(b, ResourceType.TRANSACTIONAL_ID, app + "-" + java.util.UUID.randomUUID() + "-1", AclOperation.WRITE));
            assertFalse(allows(b, ResourceType.TRANSACTIONAL_ID, StageConfig.applicationId(APP, "other") + "-x-1", AclOperation.WRITE));
            assertFalse(b.stream().anyMatch(x -> x.pattern().resourceType() == ResourceType.CLUSTER), stage + " needs nothing of the cluster");
            assertFalse(allows(b, ResourceType.TOPIC, SwapstreamConfig.topic(PREFIX, SwapstreamConfig.RAW_BUFFERS), AclOperation.CREATE));
        }
        assertTrue(allows(RoleAcls.bindings(Role.ROLLUP, "User:r", SCOPE), ResourceType.GROUP,
                StageConfig.applicationId(APP, StageConfig.ROLLUP) + RoleAcls.FLEET_METRICS_GROUP_SUFFIX, AclOperation.READ));
    }

    @Test
    void aHostsIngesterWritesItsTopicsUnderItsOwnTransactionalIdsOnly() {
        List<AclBinding> one = RoleAcls.bindings(Role.INGEST, "User:web1", new RoleAcls.Scope(PREFIX, APP, "web1", null));
        Path dir = Path.of("/var/traces");
        assertTrue(allows(one, ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalId(PREFIX, "web1", dir), AclOperation.WRITE));
        assertFalse(allows(one, ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalId(PREFIX, "web10", dir), AclOperation.WRITE));
        assertFalse(allows(one, ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalId(PREFIX, null, dir), AclOperation.WRITE));
        List<AclBinding> all = RoleAcls.bindings(Role.INGEST, "User:collector", SCOPE);
        assertTrue(allows(all, ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalId(PREFIX, null, dir), AclOperation.WRITE));
        assertTrue(allows(all, ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalId(PREFIX, "web10", dir), AclOperation.WRITE));
        // BufferPublisher's raw buffers and dead letters, WatchTransactions' positions; SessionStatus and the positions read back
        for (String t : List.of(SwapstreamConfig.RAW_BUFFERS, SwapstreamConfig.DEAD_LETTERS, SwapstreamConfig.INGEST_POSITIONS)) {
            assertTrue(allows(one, ResourceType.TOPIC, SwapstreamConfig.topic(PREFIX, t), AclOperation.WRITE), t);
        }
        assertEquals(names(List.of(SwapstreamConfig.SESSIONS, SwapstreamConfig.INGEST_POSITIONS)), names(RoleAcls.READS.get(Role.INGEST)));
        // idempotence needs no IDEMPOTENT_WRITE on the cluster since Kafka 3.0 (KIP-679): WRITE on a topic implies it
        assertFalse(one.stream().anyMatch(x -> x.pattern().resourceType() == ResourceType.CLUSTER));
        assertFalse(allows(one, ResourceType.TOPIC, SwapstreamConfig.topic(PREFIX, SwapstreamConfig.THREAD_STATS), AclOperation.READ));
    }

    @Test
    void aReaderReadsEveryRecordTopicAndWritesNothing() {
        List<AclBinding> b = RoleAcls.bindings(Role.READER, "User:dash", SCOPE);
        assertEquals(names(List.copyOf(RecordTopics.VALUE_TYPES.keySet())), names(RoleAcls.READS.get(Role.READER)));
        assertTrue(b.stream().allMatch(x -> x.entry().operation() == AclOperation.READ), b.toString());
        assertTrue(RoleAcls.bindings(Role.READER, "User:c", new RoleAcls.Scope(PREFIX, APP, null, "connect-"))
                .stream().anyMatch(x -> x.pattern().resourceType() == ResourceType.GROUP));
    }

    @Test
    void exportReadsTheRawTopicWithoutAGroupAndWritesNothing() {
        List<AclBinding> b = RoleAcls.bindings(Role.EXPORT, "User:export", SCOPE);
        String raw = SwapstreamConfig.topic(PREFIX, SwapstreamConfig.RAW_BUFFERS);
        assertEquals(List.of(AclOperation.READ), RoleAcls.operationsOnTopic(b, raw));
        // RawSessionReader assigns partitions itself and commits nothing
        assertEquals(List.of(raw), b.stream().map(x -> x.pattern().name()).distinct().toList(), b.toString());
        try (var reader = new io.swapstream.ingest.RawSessionReader("127.0.0.1:9", PREFIX, Map.of())) {
            assertEquals(raw, reader.topic());
        }
    }

    @Test
    void theArchiveReadsWhatItFollowsInItsGroupsAndWritesNothing() {
        List<AclBinding> b = RoleAcls.bindings(Role.ARCHIVE, "User:archive", SCOPE);
        // the whole-session archive follows the raw topic; --hosts and --when the host roll-ups; both read the raw buffers
        assertEquals(names(List.of(SwapstreamConfig.RAW_BUFFERS, SwapstreamConfig.HOST_STATS)), names(RoleAcls.READS.get(Role.ARCHIVE)));
        assertTrue(b.stream().noneMatch(x -> x.entry().operation() == AclOperation.WRITE), b.toString());
        // an archive's own group is the default's name and its folder's digest: the role's prefix covers both kinds
        java.nio.file.Path folder = java.nio.file.Path.of("archive");
        String wholeSessions = ArchiveCommand.defaultGroup(ArchiveCommand.DEFAULT_GROUP, folder);
        String minutes = ArchiveCommand.defaultGroup(ArchiveCommand.DEFAULT_MINUTES_GROUP, folder.toAbsolutePath());
        assertEquals(wholeSessions, ArchiveCommand.defaultGroup(ArchiveCommand.DEFAULT_GROUP, folder.toAbsolutePath().resolve("x/..")),
                "the same folder, however named, keeps its group");
        assertNotEquals(wholeSessions, ArchiveCommand.defaultGroup(ArchiveCommand.DEFAULT_GROUP, java.nio.file.Path.of("archive2")),
                "two folders, two groups");
        for (String group : List.of(wholeSessions, minutes)) {
            assertTrue(allows(b, ResourceType.GROUP, group, AclOperation.READ), group);
        }
        assertFalse(allows(b, ResourceType.GROUP, "swapstream-decode", AclOperation.READ));
        List<AclBinding> own = RoleAcls.bindings(Role.ARCHIVE, "User:archive", new RoleAcls.Scope(PREFIX, APP, null, "dc2-archive"));
        assertTrue(allows(own, ResourceType.GROUP, "dc2-archive-minutes", AclOperation.READ));
        assertFalse(allows(own, ResourceType.GROUP, ArchiveCommand.DEFAULT_GROUP, AclOperation.READ));
        assertFalse(b.stream().anyMatch(x -> x.pattern().resourceType() == ResourceType.CLUSTER
                || x.pattern().resourceType() == ResourceType.TRANSACTIONAL_ID), b.toString());
        CliRunner r = CliRunner.run("acls", "--role", "archive", "--principal", "User:archive");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("--operation Read --group swapstream-archive --resource-pattern-type prefixed"), r.out());
    }

    @Test
    void everyTopicARoleUsesIsOneTheAdminCreates() {
        Set<String> created = new HashSet<>(TopicSetup.topics().keySet());
        for (Role r : Role.values()) assertTrue(created.containsAll(RoleAcls.suffixes(r)), r.toString());
        List<AclBinding> admin = RoleAcls.bindings(Role.ADMIN, "User:admin", SCOPE);
        for (String t : created) assertTrue(allows(admin, ResourceType.TOPIC, SwapstreamConfig.topic(PREFIX, t), AclOperation.CREATE), t);
    }

    @Test
    void printsKafkaAclsLinesAndJson() {
        List<AclBinding> b = RoleAcls.bindings(Role.DECODE, "User:decode", new RoleAcls.Scope("etw.", "swapstream", null, null));
        List<String> lines = AclsCommand.kafkaAcls(b);
        assertTrue(lines.contains("kafka-acls.sh --bootstrap-server \"$KAFKA\" --command-config admin.properties --add --allow-principal"
                + " User:decode --operation Read --topic etw.raw-buffers"), String.join("\n", lines));
        assertTrue(lines.contains("kafka-acls.sh --bootstrap-server \"$KAFKA\" --command-config admin.properties --add --allow-principal"
                + " User:decode --operation Write --transactional-id swapstream-decode- --resource-pattern-type prefixed"), String.join("\n", lines));
        assertTrue(lines.stream().anyMatch(l -> l.contains("--operation Create --operation Read --operation Write --operation Delete"
                + " --operation DescribeConfigs --topic swapstream-decode- --resource-pattern-type prefixed")), String.join("\n", lines));
        String json = AclsCommand.json(b);
        assertTrue(json.contains("{\"principal\":\"User:decode\",\"resourceType\":\"TOPIC\",\"name\":\"etw.raw-buffers\",\"patternType\":"
                + "\"LITERAL\",\"operation\":\"READ\",\"permission\":\"ALLOW\",\"host\":\"*\"}"), json);
        CliRunner r = CliRunner.run("acls", "--role", "decode", "--principal", "User:decode", "--format", "json");
        assertEquals(0, r.exit(), r.err());
        assertEquals(json, r.out().strip());
        assertEquals(2, CliRunner.run("acls", "--role", "nobody", "--principal", "User:x").exit());
    }
}
