package io.swapstream.decode.streams;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.common.TopicPartition;

/**
 * Finds and aborts transactions that can never end: open on a partition at a producer epoch older
 * than the one the producer's coordinator has moved to. Under transaction.version 1 an epoch moves
 * only when a producer is initialised again or fenced, and the coordinator then aborts the open
 * transaction; a partition that never got that marker (seen after a broker's kill -9, with version
 * 1 and 2 alike) holds its last stable offset there, and every read_committed reader (a stage
 * restoring its changelog, the next stage) waits for good. On {@code __consumer_offsets} the same
 * leaves a stage's committed input offset pending, and its consumer waits in REBALANCING for good. What {@code kafka-transactions.sh
 * find-hanging} and {@code abort} do by hand. Version 2 moves the epoch at every commit, so there an
 * older epoch proves nothing, and nothing is aborted.
 */
public final class HangingTransactions {
    /** Where a stage's transactions commit its input offsets. */
    public static final String CONSUMER_OFFSETS = "__consumer_offsets";

    private HangingTransactions() {}

    /** A partition's open transaction, and the coordinator's view of its producer. */
    public record Hanging(TopicPartition partition, ProducerState open, TransactionDescription coordinator) {
        public AbortTransactionSpec abort() {
            return new AbortTransactionSpec(partition, open.producerId(), (short) open.producerEpoch(),
                    open.coordinatorEpoch().orElse(0));
        }

        @Override
        public String toString() {
            return partition + ": producer " + open.producerId() + " left a transaction open at epoch " + open.producerEpoch()
                    + " (from offset " + open.currentTransactionStartOffset().orElse(-1) + "); "
                    + (coordinator == null ? "no coordinator knows the producer"
                    : "its coordinator is at epoch " + coordinator.producerEpoch() + ", " + coordinator.state());
        }
    }

    /**
     * What a stage's transactions write: the pipeline's topics, its changelogs, and the consumer
     * offsets of its input (a transaction left open there keeps the stage's consumer waiting for
     * the offset, in REBALANCING for good: runs 333 and 340 of a BrokerCrashIT loop).
     */
    public static Predicate<String> stageTopics(String topicPrefix, String applicationId) {
        return t -> t.startsWith(topicPrefix) || t.startsWith(applicationId + "-") || t.equals(CONSUMER_OFFSETS);
    }

    /** True when {@code open}'s transaction can never end: its coordinator has moved its producer to a newer epoch. */
    public static boolean hanging(ProducerState open, TransactionDescription coordinator) {
        return open.currentTransactionStartOffset().isPresent() && coordinator.producerId() == open.producerId()
                && coordinator.producerEpoch() > open.producerEpoch();
    }

    /** Whether the cluster's transactions are version 1, where {@link #hanging} holds. */
    public static boolean applies(Admin admin) throws Exception {
        FinalizedVersionRange v = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get("transaction.version");
        return v == null || v.maxVersionLevel() < 2;
    }

    /** The hanging transactions on the partitions of the topics {@code topics} accepts. */
    public static List<Hanging> find(Admin admin, Predicate<String> topics) throws Exception {
        Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get().stream()
                .filter(topics).collect(Collectors.toSet());
        if (names.isEmpty()) return List.of();
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicDescription d : admin.describeTopics(names).allTopicNames().get().values()) {
            d.partitions().forEach(p -> partitions.add(new TopicPartition(d.name(), p.partition())));
        }
        Map<TopicPartition, List<ProducerState>> open = new HashMap<>();
        var producers = admin.describeProducers(partitions).all().get();
        producers.forEach((tp, d) -> {
            List<ProducerState> o = d.activeProducers().stream().filter(s -> s.currentTransactionStartOffset().isPresent()).toList();
            if (!o.isEmpty()) open.put(tp, o);
        });
        if (open.isEmpty()) return List.of();
        Map<Long, TransactionDescription> coordinators = coordinators(admin, open.values().stream().flatMap(List::stream).toList());
        List<Hanging> out = new ArrayList<>();
        open.forEach((tp, states) -> {
            for (ProducerState s : states) {
                TransactionDescription c = coordinators.get(s.producerId());
                if (c != null && hanging(s, c)) out.add(new Hanging(tp, s, c));
            }
        });
        return out;
    }

    /**
     * Waits until {@code tp} holds no open transaction, and aborts those that can never end. Only
     * for a partition that its caller alone writes, before it writes there (a task's own output
     * partition, as the task starts): a transaction open there is then a past one, either ending
     * (its coordinator is writing the markers) or ended without a marker here. That second kind
     * {@link #hanging} does not see when the producer kept its epoch: a restarted single node was
     * seen to record a transaction complete after dropping the markers of partitions it had no
     * leader for, and the producer went on at the same epoch. Its records there then share the fate
     * of the producer's next transaction on the partition, which may come after its caller read the
     * partition back. Returns what it aborted; throws {@link IllegalStateException} if a transaction
     * is still ending after {@code timeout}.
     */
    public static List<Hanging> settle(Admin admin, TopicPartition tp, java.time.Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Hanging> aborted = new ArrayList<>();
        while (true) {
            List<ProducerState> open = openOn(admin, tp);
            if (open.isEmpty()) return aborted;
            Map<Long, TransactionDescription> coordinators = coordinators(admin, open);
            List<ProducerState> still = openOn(admin, tp); // after the coordinator's view: a marker written in between ended it
            boolean waiting = false;
            for (ProducerState s : open) {
                boolean stillOpen = still.stream().anyMatch(o -> o.producerId() == s.producerId()
                        && o.currentTransactionStartOffset().equals(s.currentTransactionStartOffset()));
                if (!stillOpen) continue;
                TransactionDescription c = coordinators.get(s.producerId());
                if (c != null && ending(s, c, tp)) {
                    waiting = true;
                    continue;
                }
                Hanging h = new Hanging(tp, s, c);
                admin.abortTransaction(h.abort()).all().get();
                aborted.add(h);
            }
            if (!waiting) continue;
            if (System.nanoTime() > deadline) throw new IllegalStateException(tp + " still holds a transaction its coordinator is ending after " + timeout.toSeconds() + " s");
            Thread.sleep(200);
        }
    }

    /** True while {@code open}'s transaction may still end by itself: its coordinator is writing its markers, or (for all it says) adding to it. */
    static boolean ending(ProducerState open, TransactionDescription c, TopicPartition tp) {
        if (c.producerId() != open.producerId() || c.producerEpoch() > open.producerEpoch()) return false;
        return switch (c.state()) {
            case PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE -> true;
            case ONGOING -> c.topicPartitions().contains(tp);
            default -> false;
        };
    }

    private static List<ProducerState> openOn(Admin admin, TopicPartition tp) throws Exception {
        return admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers().stream()
                .filter(s -> s.currentTransactionStartOffset().isPresent()).toList();
    }

    /** The coordinator's view of each producer's transactional id, by producer id (none for an id no coordinator knows). */
    private static Map<Long, TransactionDescription> coordinators(Admin admin, List<ProducerState> open) throws Exception {
        Set<Long> ids = open.stream().map(ProducerState::producerId).collect(Collectors.toSet());
        Map<Long, String> transactionalIds = new HashMap<>();
        for (TransactionListing l : admin.listTransactions(new ListTransactionsOptions().filterProducerIds(ids)).all().get()) {
            transactionalIds.put(l.producerId(), l.transactionalId());
        }
        Map<Long, TransactionDescription> out = new HashMap<>();
        if (transactionalIds.isEmpty()) return out;
        Map<String, TransactionDescription> byId = admin.describeTransactions(transactionalIds.values()).all().get();
        transactionalIds.forEach((pid, id) -> {
            if (byId.get(id) != null) out.put(pid, byId.get(id));
        });
        return out;
    }

    /** Aborts what {@link #find} finds; returns it. */
    public static List<Hanging> abort(Admin admin, Predicate<String> topics) throws Exception {
        List<Hanging> found = find(admin, topics);
        for (Hanging h : found) admin.abortTransaction(h.abort()).all().get();
        return found;
    }
}
