package io.swapstream.stage;

import static io.swapstream.stage.InputRecordReaderTest.bytes;
import static io.swapstream.stage.InputRecordReaderTest.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.SwapstreamConfig;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stage's redo log over its store in memory: what a session notes, what a checkpoint drops, and what a restore, by a
 * reader of its own, takes again.
 */
@Timeout(60) // a guard only: nothing here waits
class RedoLogTest {
    static final String TOPIC = InputRecordReaderTest.TOPIC;
    static final String WEB01 = "web01:NT Kernel Logger:134000000000000000";
    static final String WEB02 = "web02:NT Kernel Logger:134000000000000000";

    final KeyValueStore<String, byte[]> store = store();
    final List<InputRecordReader> readers = new ArrayList<>();

    static KeyValueStore<String, byte[]> store() {
        KeyValueStore<String, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("decode-redo"), Serdes.String(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return s;
    }

    /** A redo log over the store, as a task makes it when it starts: a reader of its own over {@code topic}. */
    RedoLog log(InputRecordReaderTest.Topic topic) {
        InputRecordReader reader = InputRecordReaderTest.reader(topic, new ArrayList<>());
        readers.add(reader);
        return new RedoLog(store, reader, TOPIC);
    }

    @AfterEach
    void close() {
        readers.forEach(InputRecordReader::close);
        store.close();
    }

    /** What a replay gives, as "index=value". */
    static List<String> replay(RedoLog log, String session, long from, long to) {
        List<String> out = new ArrayList<>();
        log.replay(session, from, to, (i, v) -> out.add(i + "=" + text(v)));
        return out;
    }

    List<String> keys() {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.all()) {
            it.forEachRemaining(kv -> out.add(kv.key.replace(RedoLog.SEPARATOR, '|')));
        }
        return out;
    }

    @Test
    void aReplayGivesTheRecordsNotedInOrderReferencesReadBack() {
        InputRecordReaderTest.Topic topic = new InputRecordReaderTest.Topic().put(2, 40, "b40").put(2, 41, "b41").put(2, 43, "b43");
        RedoLog log = log(topic);
        log.note(WEB01, 0, InputRecordReader.reference(2, 40));
        log.note(WEB01, 1, InputRecordReader.reference(2, 41));
        log.note(WEB01, 2, InputRecordReader.copy(bytes("held apart, taken late")));
        log.note(WEB01, 3, InputRecordReader.reference(2, 43));
        assertEquals(List.of("0=b40", "1=b41", "2=held apart, taken late", "3=b43"), replay(log, WEB01, 0, 4));
        assertEquals(List.of("2=held apart, taken late", "3=b43"), replay(log, WEB01, 2, 4), "from a later record");
        assertEquals(List.of(), replay(log, WEB01, 4, 4), "nothing taken since");
    }

    @Test
    void keysAreTheSessionNulAndASlot() {
        RedoLog log = log(new InputRecordReaderTest.Topic());
        log.note(WEB01, 7, InputRecordReader.copy(bytes("x")));
        assertEquals(WEB01 + '\u0000' + "7", RedoLog.key(WEB01, 7));
        assertEquals(List.of(WEB01 + "|7"), keys());
        assertEquals(RedoLog.key(WEB01, 3), RedoLog.key(WEB01, SwapstreamConfig.REDO_SLOTS + 3L), "slots are reused");
        // a session whose name begins another's does not share its keys: the NUL ends a session's name
        assertFalse(RedoLog.key("web01", 11).equals(RedoLog.key("web01" + "1", 1)));
    }

    /** A checkpoint drops what its state now holds; what was taken since stays, and other sessions' entries are untouched. */
    @Test
    void aDropRemovesItsRangeOnly() {
        RedoLog log = log(new InputRecordReaderTest.Topic());
        for (long i = 0; i < 6; i++) log.note(WEB01, i, InputRecordReader.copy(bytes("a" + i)));
        for (long i = 0; i < 3; i++) log.note(WEB02, i, InputRecordReader.copy(bytes("b" + i)));
        log.drop(WEB01, 0, 4);
        assertEquals(List.of("4=a4", "5=a5"), replay(log, WEB01, 4, 6));
        assertEquals(List.of("0=b0", "1=b1", "2=b2"), replay(log, WEB02, 0, 3));
        assertEquals(List.of(WEB01 + "|4", WEB01 + "|5", WEB02 + "|0", WEB02 + "|1", WEB02 + "|2"), keys().stream().sorted().toList());
        // dropping what is gone already (a checkpoint written again) is no error
        log.drop(WEB01, 0, 4);
        assertEquals(5, keys().size());
    }

    @Test
    void aReplayOfARecordDroppedOrNeverNotedSaysWhichIsMissing() {
        RedoLog log = log(new InputRecordReaderTest.Topic());
        for (long i = 10; i < 13; i++) log.note(WEB01, i, InputRecordReader.copy(bytes("a" + i)));
        log.drop(WEB01, 10, 12);
        List<String> taken = new ArrayList<>();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> log.replay(WEB01, 10, 13, (i, v) -> taken.add(i + "=" + text(v))));
        assertEquals("record 10 of session " + WEB01 + " is missing from the redo log (its state holds records before 10, and 3 were"
                + " taken since)", e.getMessage());
        assertTrue(taken.isEmpty(), "nothing taken before the gap: " + taken);
        // a gap after the first record: what precedes it was given, in order
        e = assertThrows(IllegalStateException.class, () -> log.replay(WEB01, 12, 14, (i, v) -> taken.add(i + "=" + text(v))));
        assertTrue(e.getMessage().startsWith("record 13 of session " + WEB01 + " is missing"), e.getMessage());
        assertEquals(List.of("12=a12"), taken);
        assertThrows(IllegalStateException.class, () -> replay(log, WEB02, 0, 1), "a session never noted");
    }

    /**
     * A session that runs long: its entries reuse {@value SwapstreamConfig#REDO_SLOTS} slots, so the store (and its compacted
     * changelog) holds no more than that however many records it takes, and a replay after many checkpoints still gives the
     * records taken since the last.
     */
    @Test
    void aLongSessionReusesItsSlots() {
        RedoLog log = log(new InputRecordReaderTest.Topic());
        RedoLog.Limit every = new RedoLog.Limit(100, Long.MAX_VALUE, 1);
        long checkpoint = 0;
        long n = 3L * SwapstreamConfig.REDO_SLOTS + 57;
        for (long i = 0; i < n; i++) {
            log.note(WEB01, i, InputRecordReader.copy(bytes("r" + i)));
            if (every.reached(i + 1 - checkpoint, 0)) {
                log.drop(WEB01, checkpoint, i + 1);
                checkpoint = i + 1;
            }
            assertTrue(store.approximateNumEntries() <= 100, "at most a checkpoint's worth at " + i);
        }
        long since = n - checkpoint;
        assertEquals(n % 100, since);
        List<String> expected = new ArrayList<>();
        for (long i = checkpoint; i < n; i++) expected.add(i + "=r" + i);
        assertEquals(expected, replay(log, WEB01, checkpoint, n));
        assertEquals(since, store.approximateNumEntries());
        // with no drop, a session's keys stay within its slots
        for (long i = 0; i < SwapstreamConfig.REDO_SLOTS + 10; i++) log.note(WEB02, i, InputRecordReader.copy(bytes("w" + i)));
        assertEquals(since + SwapstreamConfig.REDO_SLOTS, store.approximateNumEntries());
        assertEquals(List.of((SwapstreamConfig.REDO_SLOTS + 2L) + "=w" + (SwapstreamConfig.REDO_SLOTS + 2)),
                replay(log, WEB02, SwapstreamConfig.REDO_SLOTS + 2L, SwapstreamConfig.REDO_SLOTS + 3L));
    }

    /**
     * A restart: the task's new redo log (a new reader, its consumer opened anew) over the store as it was, restores each
     * session from its last checkpoint, references and copies alike; a session that ended before has nothing left.
     */
    @Test
    void aRestoreAfterARestartTakesAgainWhatEachSessionTookSinceItsCheckpoint() {
        InputRecordReaderTest.Topic topic = new InputRecordReaderTest.Topic();
        // two sessions' buffers interleaved on one partition, as a host's sessions share one
        for (long o = 0; o < 10; o++) topic.put(0, o, (o % 2 == 0 ? "web01 " : "web02 ") + o);
        RedoLog before = log(topic);
        for (long i = 0; i < 5; i++) {
            before.note(WEB01, i, InputRecordReader.reference(0, 2 * i));
            before.note(WEB02, i, InputRecordReader.reference(0, 2 * i + 1));
        }
        before.note(WEB02, 5, InputRecordReader.copy(bytes("web02 late")));
        before.drop(WEB01, 0, 3); // web01's checkpoint holds its first 3 records
        before.drop(WEB02, 0, 1);
        readers.get(0).close();

        RedoLog after = log(topic);
        assertEquals(List.of("3=web01 6", "4=web01 8"), replay(after, WEB01, 3, 5));
        assertEquals(List.of("1=web02 3", "2=web02 5", "3=web02 7", "4=web02 9", "5=web02 late"), replay(after, WEB02, 1, 6),
                "a partition read back from an earlier offset than the last session's");
        // web01 ends: its final state written, its entries go
        after.drop(WEB01, 3, 5);
        assertNull(store.get(RedoLog.key(WEB01, 3)));
        assertNotNull(store.get(RedoLog.key(WEB02, 5)));
        assertThrows(IllegalStateException.class, () -> replay(after, WEB01, 3, 5));
    }

    @Test
    void aLimitIsDueAtItsRecordsOrAtItsBytesOnceThereAreEnoughRecords() {
        RedoLog.Limit limit = new RedoLog.Limit(64, 1 << 20, 4);
        assertFalse(limit.reached(63, 0));
        assertTrue(limit.reached(64, 0));
        assertFalse(limit.reached(3, 5 << 20), "large records: not a checkpoint each");
        assertTrue(limit.reached(4, 1 << 20));
        assertFalse(limit.reached(10, (1 << 20) - 1));
        assertTrue(new RedoLog.Limit(SwapstreamConfig.REDO_SLOTS, Long.MAX_VALUE, 1).reached(SwapstreamConfig.REDO_SLOTS, 0));
        for (int bad : new int[] {0, -1, SwapstreamConfig.REDO_SLOTS + 1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RedoLog.Limit(bad, 1, 1));
            assertEquals("a redo log holds 1 to " + SwapstreamConfig.REDO_SLOTS + " records, not " + bad, e.getMessage());
        }
    }
}
