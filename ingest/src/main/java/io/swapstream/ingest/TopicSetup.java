package io.swapstream.ingest;

import io.swapstream.schemas.SwapstreamConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Creates the pipeline's topics with the partition count and sizes they need (docs/architecture.md "Topics and records"). */
public final class TopicSetup {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TopicSetup.class);

    private TopicSetup() {}

    /** The topics, by suffix, with their configuration. */
    public static Map<String, Map<String, String>> topics() {
        String big = String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES);
        Map<String, Map<String, String>> t = new LinkedHashMap<>();
        t.put(SwapstreamConfig.RAW_BUFFERS, Map.of("max.message.bytes", big));
        // keyed by session: compaction alone keeps every session's last records for ever; the broker's retention ends them
        Map<String, String> perSession = Map.of("cleanup.policy", "compact,delete");
        t.put(SwapstreamConfig.SESSIONS, perSession);
        t.put(SwapstreamConfig.SWITCH_BATCHES, Map.of("max.message.bytes", big));
        t.put(SwapstreamConfig.CONTEXT_SWITCHES, Map.of());
        t.put(SwapstreamConfig.THREADS, perSession);
        t.put(SwapstreamConfig.THREAD_STATS, perSession);
        t.put(SwapstreamConfig.PROCESS_STATS, perSession);
        t.put(SwapstreamConfig.HOST_STATS, perSession);
        // a key per edge, window and session: a session processed again replaces its records
        t.put(SwapstreamConfig.WAKE_EDGES, perSession);
        t.put(SwapstreamConfig.DEAD_LETTERS, Map.of("max.message.bytes", big));
        t.put(SwapstreamConfig.INGEST_POSITIONS, Map.of("cleanup.policy", "compact"));
        return t;
    }

    /**
     * Creates the topics that do not exist yet and waits until every partition has a leader.
     *
     * @return the partition count every topic has: existing topics keep theirs
     * @throws IllegalStateException when existing topics differ in partition count: one session
     *         would be split across partitions of different numbers and never meet itself
     */
    public static int ensure(Admin admin, String prefix, int partitions, short replication)
            throws InterruptedException, ExecutionException {
        return ensureAll(admin, prefix, partitions, replication);
    }

    /**
     * As {@link #ensure(Admin, String, int, short)}, for a client that may lack the right to create topics: when
     * the broker refuses the creation, the topics this client uses ({@code needed}, by suffix) must exist already.
     *
     * @throws MissingTopicsException when some of {@code needed} do not exist and the broker refused to create them
     */
    public static int ensure(Admin admin, String prefix, int partitions, short replication, Collection<String> needed)
            throws InterruptedException, ExecutionException {
        try {
            return ensureAll(admin, prefix, partitions, replication);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof AuthorizationException)) throw e;
            return existing(admin, needed.stream().map(s -> SwapstreamConfig.topic(prefix, s)).toList(), (AuthorizationException) e.getCause());
        }
    }

    /** The partition count of {@code names}, all of which must exist; those missing are named in the exception. */
    private static int existing(Admin admin, List<String> names, AuthorizationException refused)
            throws InterruptedException, ExecutionException {
        List<String> missing = new ArrayList<>();
        List<String> refusedTopics = new ArrayList<>();
        Set<Integer> counts = new HashSet<>();
        Map<String, KafkaFuture<TopicDescription>> described = admin.describeTopics(names).topicNameValues();
        for (String name : names) {
            try {
                counts.add(described.get(name).get().partitions().size());
            } catch (ExecutionException e) {
                // the Admin's refusal does not name the topic: this one does
                if (e.getCause() instanceof TopicAuthorizationException) {
                    refusedTopics.add(name);
                    continue;
                }
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
                missing.add(name);
            }
        }
        // the Admin's refusals do not name their topics: one refusal names them all
        if (!refusedTopics.isEmpty()) throw new TopicAuthorizationException("Not authorized to describe topics", new LinkedHashSet<>(refusedTopics));
        if (!missing.isEmpty()) throw new MissingTopicsException(missing, refused);
        if (counts.size() > 1) {
            throw new IllegalStateException("the topics " + names + " differ in partition count: a session's records would land in"
                    + " partitions of different numbers; give them one count");
        }
        return counts.isEmpty() ? 0 : counts.iterator().next();
    }

    private static int ensureAll(Admin admin, String prefix, int partitions, short replication)
            throws InterruptedException, ExecutionException {
        Map<String, Map<String, String>> topics = new LinkedHashMap<>();
        topics().forEach((suffix, config) -> topics.put(SwapstreamConfig.topic(prefix, suffix), config));
        Set<String> existing = admin.listTopics().names().get();
        Map<String, Integer> counts = new TreeMap<>();
        List<String> present = topics.keySet().stream().filter(existing::contains).toList();
        if (!present.isEmpty()) {
            admin.describeTopics(present).allTopicNames().get().forEach((name, d) -> counts.put(name, d.partitions().size()));
        }
        if (counts.values().stream().distinct().count() > 1) {
            throw new IllegalStateException("the existing topics differ in partition count " + counts
                    + ": a session's records would land in partitions of different numbers; give them one count");
        }
        int n = counts.isEmpty() ? partitions : counts.values().iterator().next();
        create(admin, topics, n, replication);
        return n;
    }

    /**
     * A changelog's segment: the part the log cleaner never compacts is at most this. No smaller than
     * the largest record the changelog takes: the broker refuses a batch larger than a segment
     * (RecordBatchTooLargeException), whatever {@code max.message.bytes} says.
     */
    public static final int CHANGELOG_SEGMENT_BYTES = SwapstreamConfig.MAX_MESSAGE_BYTES;

    /**
     * Creates the changelog topics of a Kafka Streams application's stores before it starts, with
     * leaders, so its first writes do not race the topics' creation (the broker then logs
     * OutOfOrderSequenceException for the batches after a refused first one).
     */
    public static void ensureChangelogs(Admin admin, String applicationId, Collection<String> stores, int partitions,
                                        short replication) throws InterruptedException, ExecutionException {
        Map<String, Map<String, String>> topics = new LinkedHashMap<>();
        for (String store : stores) {
            // small segments and an eager cleaner: a changelog holds about the state, not its history
            topics.put(applicationId + "-" + store + "-changelog", Map.of("cleanup.policy", "compact",
                    "max.message.bytes", String.valueOf(SwapstreamConfig.MAX_MESSAGE_BYTES),
                    "segment.bytes", String.valueOf(CHANGELOG_SEGMENT_BYTES), "min.cleanable.dirty.ratio", "0.1"));
        }
        List<String> existed = create(admin, topics, partitions, replication);
        if (existed.isEmpty()) return;
        try {
            for (String raised : raiseSegments(admin, existed)) {
                LOG.info("raised segment.bytes of {} to {}: a record may be that large", raised, CHANGELOG_SEGMENT_BYTES);
            }
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof AuthorizationException)) throw e;
            // a principal may create topics and not read or alter their configs: the stage still runs
            LOG.warn("could not check the changelogs' segment.bytes ({}): one below {} refuses records that large",
                    e.getCause().getMessage(), CHANGELOG_SEGMENT_BYTES);
        }
    }

    /**
     * Changelogs made by an earlier version have 4 MiB segments, smaller than a record they may have to
     * take: their {@code segment.bytes} is raised to {@link #CHANGELOG_SEGMENT_BYTES} (never lowered).
     * @return the topics raised
     */
    static List<String> raiseSegments(Admin admin, Collection<String> changelogs) throws InterruptedException, ExecutionException {
        List<ConfigResource> resources = changelogs.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<ConfigResource, Collection<AlterConfigOp>> raise = new LinkedHashMap<>();
        admin.describeConfigs(resources).all().get().forEach((resource, config) -> {
            ConfigEntry segment = config.get("segment.bytes");
            if (segment != null && Long.parseLong(segment.value()) < CHANGELOG_SEGMENT_BYTES) {
                raise.put(resource, List.of(new AlterConfigOp(new ConfigEntry("segment.bytes", String.valueOf(CHANGELOG_SEGMENT_BYTES)),
                        AlterConfigOp.OpType.SET)));
            }
        });
        if (!raise.isEmpty()) admin.incrementalAlterConfigs(raise).all().get();
        return raise.keySet().stream().map(ConfigResource::name).toList();
    }

    /**
     * A replicated topic takes a write once two replicas have it: one broker may fail without loss
     * or a stop (replication 3, min.insync.replicas 2).
     */
    static Map<String, String> withInSync(Map<String, String> config, short replication) {
        if (replication < 3) return config;
        Map<String, String> c = new LinkedHashMap<>(config);
        c.put("min.insync.replicas", String.valueOf(minInSync(replication)));
        return c;
    }

    /** Replicas a write needs at {@code replication}: two of three or more, so one broker may fail. */
    public static int minInSync(short replication) {
        return replication >= 3 ? 2 : 1;
    }

    /** @return those of {@code topics} that existed already (listed, or refused as existing when created) */
    private static List<String> create(Admin admin, Map<String, Map<String, String>> topics, int partitions, short replication)
            throws InterruptedException, ExecutionException {
        Set<String> existing = new HashSet<>(admin.listTopics().names().get());
        List<NewTopic> create = new ArrayList<>();
        topics.forEach((name, config) -> {
            if (!existing.contains(name)) create.add(new NewTopic(name, partitions, replication).configs(withInSync(config, replication)));
        });
        // a topic made a moment ago may not be listed yet: its creation is refused as existing
        Set<String> refused = new java.util.TreeSet<>();
        for (Map.Entry<String, KafkaFuture<Void>> f : admin.createTopics(create).values().entrySet()) {
            try {
                f.getValue().get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof TopicAuthorizationException) {
                    refused.add(f.getKey());
                    continue;
                }
                if (!(e.getCause() instanceof TopicExistsException)) throw e;
                existing.add(f.getKey());
            }
        }
        // the Admin's refusals do not name their topics: one refusal names them all
        if (!refused.isEmpty()) throw new ExecutionException(new TopicAuthorizationException("Not authorized to create topics", refused));
        awaitLeaders(admin, List.copyOf(topics.keySet()));
        return topics.keySet().stream().filter(existing::contains).toList();
    }

    /**
     * Waits until every partition has a leader. A producer that writes to a partition still being
     * created can have its first batch refused while later ones are taken, and then fails with an
     * out-of-order sequence: seen here on a fresh in-JVM broker.
     */
    static void awaitLeaders(Admin admin, List<String> names) throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            boolean ready;
            try {
                Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get();
                ready = d.values().stream()
                        .allMatch(t -> t.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()));
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
                ready = false;
            }
            if (ready) return;
            if (System.nanoTime() > deadline) throw new IllegalStateException("topics " + names + " have no leaders after 60 s");
            Thread.sleep(50);
        }
    }
}
