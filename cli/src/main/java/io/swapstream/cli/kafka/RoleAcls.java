package io.swapstream.cli.kafka;

import static io.swapstream.schemas.SwapstreamConfig.*;
import static org.apache.kafka.common.acl.AclOperation.*;

import io.swapstream.cli.ArchiveCommand;
import io.swapstream.ingest.WatcherIds;
import io.swapstream.local.StageConfig;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The rights each part of the pipeline needs on Kafka, as ACL bindings (docs/operations.md "Security"). The topics a
 * role reads and writes are listed here by the same suffixes the stages use; RoleAclsTest holds them to each stage's
 * topology and clients.
 */
public final class RoleAcls {
    private RoleAcls() {}

    public enum Role {
        INGEST, DECODE, AGGREGATE, ROLLUP, READER, EXPORT, ARCHIVE, ADMIN;

        String label() { return name().toLowerCase(Locale.ROOT); }
    }

    /** The topics a role reads, by suffix. */
    public static final Map<Role, List<String>> READS = Map.of(
            // ingest FILE skips sessions that have ended; --watch resumes from its committed positions
            Role.INGEST, List.of(SESSIONS, INGEST_POSITIONS),
            Role.DECODE, List.of(RAW_BUFFERS),
            Role.AGGREGATE, List.of(SWITCH_BATCHES, SESSIONS),
            // the rollup's /metrics follows its own outputs
            Role.ROLLUP, List.of(THREAD_STATS, WAKE_EDGES, PROCESS_STATS, HOST_STATS),
            Role.READER, List.of(SESSIONS, SWITCH_BATCHES, CONTEXT_SWITCHES, THREADS, THREAD_STATS, PROCESS_STATS, HOST_STATS, WAKE_EDGES),
            // export: RawSessionReader assigns partitions itself (no group); READ implies the DESCRIBE its metadata and
            // offset look-ups (partitionsFor, offsetsForTimes, endOffsets) need
            Role.EXPORT, List.of(RAW_BUFFERS),
            // archive: ended sessions' end markers and buffers; with --hosts or --when, the host roll-ups it follows
            Role.ARCHIVE, List.of(RAW_BUFFERS, HOST_STATS),
            Role.ADMIN, List.of());

    /** The topics a role writes, by suffix. */
    public static final Map<Role, List<String>> WRITES = Map.of(
            Role.INGEST, List.of(RAW_BUFFERS, DEAD_LETTERS, INGEST_POSITIONS),
            Role.DECODE, List.of(SESSIONS, SWITCH_BATCHES, CONTEXT_SWITCHES, THREADS, DEAD_LETTERS),
            Role.AGGREGATE, List.of(THREAD_STATS, WAKE_EDGES),
            Role.ROLLUP, List.of(PROCESS_STATS, HOST_STATS),
            Role.READER, List.of(),
            Role.EXPORT, List.of(),
            // the archive writes files; in Kafka only its group's offsets
            Role.ARCHIVE, List.of(),
            Role.ADMIN, List.of());

    /** The rollup's /metrics feed: a consumer group of its own beside its application's. */
    public static final String FLEET_METRICS_GROUP_SUFFIX = "-fleet-metrics";

    /**
     * Where a role's bindings apply.
     *
     * @param applicationId the stages' --application-id (the stage's name is appended)
     * @param host          for {@link Role#INGEST}: the one host it publishes as, or null for every host
     * @param group         for {@link Role#READER}: the consumer groups it may use begin with this, or null for none (tail needs none);
     *                      for {@link Role#ARCHIVE}: its groups begin with this, or null for the defaults' common start
     */
    public record Scope(String prefix, String applicationId, String host, String group) {}

    /** The stages' roles by the stage's name. */
    public static Role ofStage(String stage) {
        return Role.valueOf(stage.toUpperCase(Locale.ROOT));
    }

    /** The bindings {@code role} needs, for {@code principal} ({@code User:NAME}), allowed from any client host. */
    public static List<AclBinding> bindings(Role role, String principal, Scope s) {
        Rights r = new Rights(principal);
        for (String suffix : READS.get(role)) r.add(ResourceType.TOPIC, topic(s.prefix(), suffix), PatternType.LITERAL, READ);
        for (String suffix : WRITES.get(role)) r.add(ResourceType.TOPIC, topic(s.prefix(), suffix), PatternType.LITERAL, WRITE);
        switch (role) {
            case INGEST -> r.add(ResourceType.TRANSACTIONAL_ID, WatcherIds.transactionalIdPrefix(s.prefix(), s.host()),
                    PatternType.PREFIXED, WRITE);
            case DECODE, AGGREGATE, ROLLUP -> {
                String app = StageConfig.applicationId(s.applicationId(), role.label());
                // Kafka Streams' internal topics and transactional ids (exactly-once v2: <application.id>-<process>-<thread>)
                // begin with the application id and '-'; its group is the application id
                String internal = app + "-";
                r.add(ResourceType.TOPIC, internal, PatternType.PREFIXED, CREATE, READ, WRITE, DELETE, DESCRIBE_CONFIGS);
                r.add(ResourceType.GROUP, app, PatternType.LITERAL, READ);
                r.add(ResourceType.TRANSACTIONAL_ID, internal, PatternType.PREFIXED, WRITE);
                if (role == Role.ROLLUP) r.add(ResourceType.GROUP, app + FLEET_METRICS_GROUP_SUFFIX, PatternType.LITERAL, READ);
            }
            case READER -> {
                if (s.group() != null) r.add(ResourceType.GROUP, s.group(), PatternType.PREFIXED, READ);
            }
            case EXPORT -> {
                // reads by assign(): no group, no offsets kept
            }
            case ARCHIVE -> {
                // swapstream-archive, and the flight recorder's swapstream-archive-minutes, begin with the same
                String group = s.group() != null ? s.group() : ArchiveCommand.DEFAULT_GROUP;
                r.add(ResourceType.GROUP, group, PatternType.PREFIXED, READ);
            }
            case ADMIN -> {
                // swapstream topics --create: the pipeline's topics, with their settings
                r.add(ResourceType.TOPIC, s.prefix(), PatternType.PREFIXED, CREATE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);
                // swapstream acls --apply and the hosts' SCRAM credentials
                r.add(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, DESCRIBE, ALTER);
            }
        }
        return r.bindings;
    }

    /** The suffixes of the topics {@code role} reads or writes. */
    public static Set<String> suffixes(Role role) {
        Set<String> t = new LinkedHashSet<>(READS.get(role));
        t.addAll(WRITES.get(role));
        return t;
    }

    /** The operations {@code bindings} allow on topic {@code name}, as its ACLs would match it (literal or by prefix). */
    public static List<AclOperation> operationsOnTopic(List<AclBinding> bindings, String name) {
        List<AclOperation> ops = new ArrayList<>();
        for (AclBinding b : bindings) {
            ResourcePattern p = b.pattern();
            if (p.resourceType() != ResourceType.TOPIC) continue;
            boolean matches = p.patternType() == PatternType.LITERAL ? p.name().equals(name) : name.startsWith(p.name());
            if (matches && !ops.contains(b.entry().operation())) ops.add(b.entry().operation());
        }
        return ops;
    }

    private static final class Rights {
        final String principal;
        final List<AclBinding> bindings = new ArrayList<>();

        Rights(String principal) { this.principal = principal; }

        void add(ResourceType type, String name, PatternType pattern, AclOperation... ops) {
            for (AclOperation op : ops) {
                bindings.add(new AclBinding(new ResourcePattern(type, name, pattern),
                        new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)));
            }
        }
    }
}
