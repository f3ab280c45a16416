package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The states read from a broker's data after a kill -9 (BrokerCrashIT, run 233 of a loop), and their neighbours. */
class HangingTransactionsTest {
    static ProducerState open(long producerId, int epoch, Long startOffset) {
        return new ProducerState(producerId, epoch, 143, 1_795_425_925_072L, OptionalInt.of(0),
                startOffset == null ? OptionalLong.empty() : OptionalLong.of(startOffset));
    }

    static TransactionDescription coordinator(long producerId, int epoch, TransactionState state) {
        return new TransactionDescription(1, state, producerId, epoch, 10_000, OptionalLong.empty(), Set.of());
    }

    @Test
    void aTransactionOpenAtAnEpochItsCoordinatorLeftCanNeverEnd() {
        // seen: decode-sessions changelog open from offset 21 at epoch 0; the coordinator Empty at epoch 1
        assertTrue(HangingTransactions.hanging(open(0, 0, 21L), coordinator(0, 1, TransactionState.EMPTY)));
        assertTrue(HangingTransactions.hanging(open(0, 0, 21L), coordinator(0, 2, TransactionState.ONGOING)));
    }

    @Test
    void theCurrentTransactionAndClosedOnesAreLeftAlone() {
        assertFalse(HangingTransactions.hanging(open(0, 1, 21L), coordinator(0, 1, TransactionState.ONGOING)), "still going");
        assertFalse(HangingTransactions.hanging(open(0, 1, 21L), coordinator(0, 1, TransactionState.PREPARE_COMMIT)),
                "its markers are on their way");
        assertFalse(HangingTransactions.hanging(open(0, 0, null), coordinator(0, 1, TransactionState.EMPTY)), "nothing open");
        assertFalse(HangingTransactions.hanging(open(7, 0, 21L), coordinator(0, 1, TransactionState.EMPTY)), "another producer");
    }

    @Test
    void onATasksOwnPartitionBeforeItWritesOnlyATransactionWhoseMarkersAreOnTheirWayWillEndByItself() {
        TopicPartition tp = new TopicPartition("live.thread-stats", 0);
        assertTrue(HangingTransactions.ending(open(0, 1, 21L), coordinator(0, 1, TransactionState.PREPARE_COMMIT), tp));
        assertTrue(HangingTransactions.ending(open(0, 1, 21L), coordinator(0, 1, TransactionState.PREPARE_ABORT), tp));
        assertTrue(HangingTransactions.ending(open(0, 1, 21L),
                new TransactionDescription(1, TransactionState.ONGOING, 0, 1, 10_000, OptionalLong.empty(), Set.of(tp)), tp),
                "for all the coordinator says, still written");
        // seen after a restarted single node dropped a marker and recorded the transaction complete: the producer kept its epoch
        assertFalse(HangingTransactions.ending(open(0, 1, 21L), coordinator(0, 1, TransactionState.COMPLETE_COMMIT), tp));
        assertFalse(HangingTransactions.ending(open(0, 1, 21L), coordinator(0, 1, TransactionState.ONGOING), tp),
                "the producer's current transaction has not added this partition");
        assertFalse(HangingTransactions.ending(open(0, 0, 21L), coordinator(0, 1, TransactionState.PREPARE_COMMIT), tp),
                "an older epoch's");
    }

    @Test
    void theAbortNamesThePartitionProducerAndEpochFound() {
        TopicPartition tp = new TopicPartition("live.switch-batches", 0);
        var h = new HangingTransactions.Hanging(tp, open(0, 0, 2L), coordinator(0, 1, TransactionState.EMPTY));
        assertEquals(tp, h.abort().topicPartition());
        assertEquals(0, h.abort().producerId());
        assertEquals(0, h.abort().producerEpoch());
        assertEquals(0, h.abort().coordinatorEpoch());
    }

    @Test
    void aStageLooksAtWhatItsTransactionsWriteIncludingItsConsumerOffsets() {
        var topics = HangingTransactions.stageTopics("live.", "live.-decode");
        assertTrue(topics.test("live.switch-batches"));
        assertTrue(topics.test("live.-decode-decode-sessions-changelog"));
        // seen: __consumer_offsets-0 open at epoch 0 from offset 6, the coordinator Empty at epoch 1 (run 333)
        assertTrue(topics.test("__consumer_offsets"));
        assertFalse(topics.test("other.switch-batches"));
        assertFalse(topics.test("__transaction_state"));
    }
}
