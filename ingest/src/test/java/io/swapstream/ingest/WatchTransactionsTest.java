package io.swapstream.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The watcher's transactions on a {@link MockProducer}: buffers and the positions that count them commit together, a
 * failed transaction is aborted (or its producer replaced) before the next and the positions are read again, and a
 * watcher fenced again and again stops.
 */
class WatchTransactionsTest {
    private static final String RAW = "t.raw-buffers";
    private static final String POSITIONS = "t.ingest-positions";

    private final FakeKafka kafka = new FakeKafka();
    private final List<String> log = new ArrayList<>();
    private final WatchTransactions tx = new WatchTransactions(new DirectoryIngest.Settings(Path.of("/traces"), "web01", 30_000, "t.",
            "unused:9092", "swapstream-ingest-t.web01:1", null, Map.of(), AfterPublish.KEEP, null), log::add, kafka);

    private static ProducerRecord<String, byte[]> buffer(String session, int n) {
        return new ProducerRecord<>(RAW, session, new byte[] {(byte) n});
    }

    private static IngestPosition position(long nextIndex, long offset) {
        IngestPosition p = new IngestPosition();
        p.path = "/traces/h.etl";
        p.nextIndex = nextIndex;
        p.offset = offset;
        return p;
    }

    @Test
    void aTransactionOpensAtItsFirstSendAndCommitsItsBuffersWithTheirPositions() {
        assertEquals(1, kafka.positionReads, "the committed positions are read once, at the start");
        assertFalse(tx.isOpen());
        tx.commit(Map.of());
        assertEquals(0, kafka.commits(), "nothing sent, nothing moved: no transaction");

        tx.send(buffer("s", 0));
        tx.send(buffer("s", 1));
        assertTrue(tx.isOpen());
        assertTrue(kafka.producer().transactionInFlight());
        assertEquals(2, kafka.producer().uncommittedRecords().size());
        assertNull(tx.committed("s"), "not committed yet");

        tx.commit(Map.of("s", position(2, 16_384)));
        assertFalse(tx.isOpen());
        assertEquals(1, kafka.commits(), "one transaction for the buffers and the position");
        List<ProducerRecord<String, byte[]>> all = kafka.committed();
        assertEquals(List.of(RAW, RAW, POSITIONS), all.stream().map(ProducerRecord::topic).toList(), "the position goes after what it counts");
        assertEquals("s", all.get(2).key());
        IngestPosition p = IngestPosition.decode(all.get(2).value());
        assertEquals(2, p.nextIndex());
        assertEquals(16_384, p.offset());
        assertEquals(2, tx.committed("s").nextIndex(), "known committed once it is");
        assertEquals(16_384, tx.committed("s").offset());
    }

    @Test
    void aFailedCommitKeepsTheLastCommittedPositionAndIsAbortedBeforeTheNext() {
        tx.send(buffer("s", 0));
        tx.commit(Map.of("s", position(1, 8_192)));
        MockProducer<String, byte[]> producer = kafka.producer();

        tx.send(buffer("s", 1));
        producer.commitTransactionException = new KafkaException("the coordinator moved");
        assertThrows(KafkaException.class, () -> tx.commit(Map.of("s", position(2, 16_384))));
        assertEquals(1, tx.committed("s").nextIndex(), "what did not commit is not known committed");
        tx.failed();
        assertFalse(tx.isOpen());

        producer.commitTransactionException = null;
        assertTrue(tx.ready());
        assertTrue(producer.transactionAborted(), "the failed transaction is aborted first");
        assertSame(producer, kafka.producer(), "an abort that works keeps the producer");
        assertEquals(2, kafka.positionReads, "a commit that failed may have gone through: the positions are read again");
        assertEquals(1, tx.committed("s").nextIndex());
        assertEquals(List.of(0), kafka.committed(RAW).stream().map(r -> (int) r.value()[0]).toList(), "the aborted buffer is not committed");

        assertTrue(tx.ready(), "ready again without another abort");
        assertEquals(2, kafka.positionReads);
    }

    @Test
    void aProducerThatCannotAbortIsReplaced() {
        tx.send(buffer("s", 0));
        MockProducer<String, byte[]> first = kafka.producer();
        first.abortTransactionException = new KafkaException("the producer cannot go on");
        tx.failed();
        assertTrue(tx.ready());
        assertTrue(first.closed());
        assertEquals(2, kafka.producers.size(), "a new producer of the same transactional id (Kafka aborts what the old left open)");
        tx.send(buffer("s", 1));
        tx.commit(Map.of("s", position(1, 8_192)));
        assertEquals(1, kafka.producer().commitCount());
        assertEquals(List.of(1), kafka.committed(RAW).stream().map(r -> (int) r.value()[0]).toList());
    }

    @Test
    void whileKafkaDoesNotAnswerItIsNotReadyAndARefusedCredentialIsFatal() {
        tx.send(buffer("s", 0));
        MockProducer<String, byte[]> producer = kafka.producer();
        producer.abortTransactionException = new TimeoutException("no answer in 60000 ms");
        tx.failed();
        assertFalse(tx.ready());
        assertFalse(tx.ready());
        assertEquals(2, kafka.credentialChecks, "each look asks whether the credential is still taken");
        assertEquals(2, log.stream().filter(l -> l.startsWith("Kafka does not answer")).count(), log.toString());
        assertEquals(1, kafka.producers.size(), "a timeout is waited out, the producer kept");

        kafka.credentialRefused = new AuthenticationException("the credential was deleted");
        assertThrows(AuthenticationException.class, tx::ready);

        kafka.credentialRefused = null;
        producer.abortTransactionException = null;
        assertTrue(tx.ready(), "once Kafka answers");
        assertTrue(producer.transactionAborted());
    }

    @Test
    void aFencedWatcherTakesOverWithANewProducerAFewTimesInTenMinutesThenStops() {
        MockProducer<String, byte[]> first = kafka.producer();
        tx.send(buffer("s", 0));
        // the twin that fenced it commits a position of its own: the new producer goes on from there
        MockProducer<String, byte[]> twin = (MockProducer<String, byte[]>) kafka.newProducer();
        twin.beginTransaction();
        twin.send(new ProducerRecord<>(POSITIONS, "s", position(5, 40_960).encode()));
        twin.commitTransaction();

        long now = 1_000;
        tx.fenced(new ProducerFencedException("epoch bumped"), now);
        assertTrue(first.closed());
        assertTrue(tx.ready());
        assertEquals(3, kafka.producers.size(), "a new producer takes over");
        assertEquals(5, tx.committed("s").nextIndex(), "from the last committed positions, whoever committed them");
        for (int i = 1; i < WatchTransactions.MAX_FENCINGS; i++) {
            tx.fenced(new ProducerFencedException("epoch bumped"), now += 60_000);
            assertTrue(tx.ready());
        }
        assertEquals(WatchTransactions.MAX_FENCINGS, log.stream().filter(l -> l.contains("a new producer takes over")).count());

        ProducerFencedException stop = assertThrows(ProducerFencedException.class,
                () -> tx.fenced(new ProducerFencedException("epoch bumped again"), 1_000 + 10 * 60_000));
        assertTrue(stop.getMessage().contains("another watcher of this directory?"), stop.getMessage());
        assertEquals("epoch bumped again", stop.getCause().getMessage());

        // the budget is a sliding window: once the first fencing is more than 10 minutes old, one more is survived
        tx.fenced(new ProducerFencedException("epoch bumped"), 1_000 + 10 * 60_000 + 1);
        assertTrue(tx.ready());
    }
}
