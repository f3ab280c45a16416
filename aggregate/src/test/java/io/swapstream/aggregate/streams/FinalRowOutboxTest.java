package io.swapstream.aggregate.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.SessionPartitioner;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The outbox against a partition held in a list: what a torn transaction leaves (the state committed
 * and its rows not, or the other way round) and what a task that starts on it sends.
 */
class FinalRowOutboxTest {
    /** The task's partition of a two-partition rows topic, and a session whose rows go there. */
    static final int PARTITIONS = 2;
    static final String SESSION = sessionIn(0);
    static final String ELSEWHERE = sessionIn(1);

    KeyValueStore<String, byte[]> store;
    final List<Map.Entry<String, byte[]>> topic = new ArrayList<>();
    int scans;

    @BeforeEach
    void store() {
        store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("sessions"), Serdes.String(), Serdes.ByteArray())
                .withLoggingDisabled().build();
        MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
        store.init(context.getStateStoreContext(), store);
    }

    static String sessionIn(int partition) {
        for (int i = 0; ; i++) {
            if (SessionPartitioner.partition("host:" + i, PARTITIONS) == partition) return "host:" + i;
        }
    }

    /** Final rows begin with F here; the outbox is told so, as the processor tells it with the row's own field. */
    static byte[] row(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    FinalRowOutbox outbox() {
        return new FinalRowOutbox(store, new FinalRowOutbox.OutputLog() {
            public long end() { return topic.size(); }
            public void scan(long from, long until, BiConsumer<String, byte[]> each) {
                scans++;
                for (long i = Math.max(from, 0); i < until; i++) each.accept(topic.get((int) i).getKey(), topic.get((int) i).getValue());
            }
            public String topic() { return "etw.thread-stats"; }
            public int partition() { return 0; }
            public int partitions() { return PARTITIONS; }
        }, v -> v[0] == 'F');
    }

    List<String> start(FinalRowOutbox o) {
        List<String> resent = new ArrayList<>();
        o.start(!store.all().hasNext(), r -> {
            resent.add(r.key());
            topic.add(Map.entry(r.key(), r.value()));
        });
        return resent;
    }

    void sent(String key, String value) {
        topic.add(Map.entry(key, row(value)));
    }

    long pageKeys() {
        long n = 0;
        try (KeyValueIterator<String, byte[]> it = store.all()) {
            while (it.hasNext()) if (it.next().key.startsWith(FinalRowOutbox.PAGES)) n++;
        }
        return n;
    }

    @Test
    void rowsTheStateKeptAndTheTopicLacksAreSentAgainOnceWhenTheTaskStarts() {
        FinalRowOutbox first = outbox();
        assertEquals(List.of(), start(first));
        String w1 = SESSION + "/7/60", w2 = SESSION + "/7/120";
        assertTrue(first.emitting(SESSION, w1, row("F w1"), 1));
        assertTrue(first.emitting(SESSION, w2, row("F w2"), 2));
        first.writePage();
        sent(w1, "F w1"); // the transaction that kept both committed its state, and w2 was lost

        FinalRowOutbox second = outbox();
        assertEquals(List.of(w2), start(second), "only the row the topic lacks");
        assertEquals(1, second.kept(), "kept until seen");
        second.confirm();
        assertEquals(0, second.kept());
        assertEquals(0, pageKeys(), "no page left once every row was seen");

        assertEquals(List.of(), start(outbox()), "sent again once");
        assertEquals(List.of(w1, w2), topic.stream().map(Map.Entry::getKey).toList());
    }

    @Test
    void finalRowsTheTopicHasAheadOfTheStateAreNotSentAgain() {
        FinalRowOutbox first = outbox();
        start(first);
        String w1 = SESSION + "/7/60", w2 = SESSION + "/7/120", whole = SESSION + "/7";
        assertTrue(first.emitting(SESSION, w1, row("F w1"), 1));
        first.writePage();
        sent(w1, "F w1");
        // a transaction committed these and lost the state that emitted them
        sent(w2, "F w2");
        sent(whole, "n whole, not final");
        sent(whole, "F whole");

        FinalRowOutbox second = outbox();
        assertEquals(List.of(), start(second));
        // the state takes its batches again and emits the same rows
        assertFalse(second.emitting(SESSION, w2, row("F w2"), 2), "the topic has it");
        assertFalse(second.emitting(SESSION, whole, row("F whole"), 3), "the topic has its final version");
        assertTrue(second.emitting(SESSION, SESSION + "/7/180", row("F w3"), 4), "a new row");
        assertTrue(second.emitting(SESSION, w2, row("F w2"), 2), "noted once: a second emit of it is the state's own doing");
    }

    @Test
    void confirmingDropsTheRowsFoundAndKeepsTheRestAndReadsEachOffsetOnce() {
        FinalRowOutbox o = outbox();
        start(o);
        for (int i = 1; i <= 3; i++) {
            assertTrue(o.emitting(SESSION, SESSION + "/7/" + i, row("F w" + i), i));
            o.writePage();
        }
        assertEquals(3, pageKeys());
        sent(SESSION + "/7/1", "F w1");
        sent(SESSION + "/7/3", "F w3"); // w2's transaction not committed yet
        int before = scans;
        o.confirm();
        assertEquals(1, o.kept());
        assertEquals(1, pageKeys());
        sent(SESSION + "/7/2", "F w2");
        o.confirm();
        assertEquals(0, o.kept());
        assertEquals(0, pageKeys());
        assertEquals(before + 2, scans);
        // a restart reads from where the last look ended, and finds nothing to send
        assertEquals(List.of(), start(outbox()));
    }

    @Test
    void aRowChangedSinceTheTopicHadItIsSentAndARowOfAnotherPartitionIsNotKept() {
        FinalRowOutbox o = outbox();
        start(o);
        assertTrue(o.emitting(ELSEWHERE, ELSEWHERE + "/7/60", row("F"), 1));
        o.writePage();
        assertEquals(0, o.kept(), "another task's partition: not read back here");
        sent(SESSION + "/7/60", "F old");
        FinalRowOutbox second = outbox();
        start(second);
        assertTrue(second.emitting(SESSION, SESSION + "/7/60", row("F new"), 1), "not the same bytes: not the same row");
    }

    @Test
    void aStateWithoutAnOutboxYetLooksBackForRowsAheadOfIt() {
        store.put("host:9", new byte[] {1}); // a session's progress, from a version that kept no rows
        sent(SESSION + "/7/60", "F w1");
        FinalRowOutbox o = outbox();
        assertEquals(List.of(), start(o));
        assertFalse(o.emitting(SESSION, SESSION + "/7/60", row("F w1"), 1));
    }

    @Test
    void aSessionEndsRowsAreKeptInPagesThatFitTheChangelogAndAllComeBack() {
        FinalRowOutbox o = outbox();
        start(o);
        // one process() call: the end of a session of 7,000 threads, rows of 700 bytes
        byte[] value = new byte[700];
        value[0] = 'F';
        List<String> keys = new ArrayList<>();
        for (int tid = 1; tid <= 7000; tid++) {
            keys.add(SESSION + "/" + tid);
            assertTrue(o.emitting(SESSION, SESSION + "/" + tid, value, tid));
        }
        o.writePage();
        long pages = 0;
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(FinalRowOutbox.PAGES, new org.apache.kafka.common.serialization.StringSerializer())) {
            while (it.hasNext()) {
                int size = it.next().value.length;
                assertTrue(size <= FinalRowOutbox.PAGE_BYTES, "a page of " + size + " bytes");
                pages++;
            }
        }
        assertEquals(5, pages, "7,000 rows of about 720 bytes each in pages of 1 MiB");
        assertEquals(7000, o.kept());
        // the transaction committed the state and lost every row
        assertEquals(keys, start(outbox()));
    }
}
