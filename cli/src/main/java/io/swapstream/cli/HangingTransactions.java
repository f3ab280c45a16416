package io.swapstream.cli;

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
final class HangingTransactions {
    /** Where a stage's transactions commit its input offsets. */
    static final String CONSUMER_OFFSETS = "__consumer_offsets";

    private HangingTransactions() {}

    /** A partition's open transaction, and the coordinator's view of its producer. */
    record Hanging(TopicPartition partition, ProducerState open, TransactionDescription coordinator) {
        AbortTransactionSpec abort() {
            return new AbortTransactionSpec(partition, open.producerId(), (short) open.producerEpoch(),
                    open.coordinatorEpoch().orElse(0));
        }

        @Override
        public String toString() {
            return partition + ": producer " + open.producerId() + " left a transaction open at epoch " + open.producerEpoch()
                    + " (from offset " + open.currentTransactionStartOffset().orElse(-1) + "); its coordinator is at epoch "
                    + coordinator.producerEpoch() + ", " + coordinator.state();
        }
    }

    /**
     * What a stage's transactions write: the pipeline's topics, its changelogs, and the consumer
     * offsets of its input (a transaction left open there keeps the stage's consumer waiting for
     * the offset, in REBALANCING for good: runs 333 and 340 of a BrokerCrashIT loop).
     */
    static Predicate<String> stageTopics(String topicPrefix, String applicationId) {
        return t -> t.startsWith(topicPrefix) || t.startsWith(applicationId + "-") || t.equals(CONSUMER_OFFSETS);
    }

    /** True when {@code open}'s transaction can never end: its coordinator has moved its producer to a newer epoch. */
    static boolean hanging(ProducerState open, TransactionDescription coordinator) {
        return open.currentTransactionStartOffset().isPresent() && coordinator.producerId() == open.producerId()
                && coordinator.producerEpoch() > open.producerEpoch();
    }

    /** Whether the cluster's transactions are version 1, where {@link #hanging} holds. */
    static boolean applies(Admin admin) throws Exception {
        FinalizedVersionRange v = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get("transaction.version");
        return v == null || v.maxVersionLevel() < 2;
    }

    /** The hanging transactions on the partitions of the topics {@code topics} accepts. */
    static List<Hanging> find(Admin admin, Predicate<String> topics) throws Exception {
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
        Set<Long> ids = open.values().stream().flatMap(List::stream).map(ProducerState::producerId).collect(Collectors.toSet());
        Map<Long, String> transactionalIds = new HashMap<>();
        for (TransactionListing l : admin.listTransactions(new ListTransactionsOptions().filterProducerIds(ids)).all().get()) {
            transactionalIds.put(l.producerId(), l.transactionalId());
        }
        if (transactionalIds.isEmpty()) return List.of();
        Map<String, TransactionDescription> coordinators = admin.describeTransactions(transactionalIds.values()).all().get();
        List<Hanging> out = new ArrayList<>();
        open.forEach((tp, states) -> {
            for (ProducerState s : states) {
                TransactionDescription c = coordinators.get(transactionalIds.get(s.producerId()));
                if (c != null && hanging(s, c)) out.add(new Hanging(tp, s, c));
            }
        });
        return out;
    }

    /** Aborts what {@link #find} finds; returns it. */
    static List<Hanging> abort(Admin admin, Predicate<String> topics) throws Exception {
        List<Hanging> found = find(admin, topics);
        for (Hanging h : found) admin.abortTransaction(h.abort()).all().get();
        return found;
    }
}
