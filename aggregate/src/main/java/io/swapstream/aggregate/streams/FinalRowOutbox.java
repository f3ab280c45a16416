package io.swapstream.aggregate.streams;

import io.swapstream.schemas.SessionPartitioner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The final rows a task has emitted and not yet seen in its partition of {@code etw.thread-stats},
 * kept in the task's sessions store, so they commit (or not) with the state that emitted them.
 * <p>
 * Why: after a broker's kill -9, a restarted single node was seen to commit one transaction on some of
 * its partitions and abort it on others (README, "Transactions"). A transaction that commits the
 * aggregate's state and loses its rows would lose them for good: a final row is emitted once and its
 * accumulator dropped. One that loses the state and commits the rows would have them emitted twice
 * once the batches are taken again. So when the task starts it settles its output partition (no
 * transaction left open there), reads it back from where it last looked, sends again each kept row it
 * does not find, and notes the final rows it finds that its state has not emitted yet: when the state
 * reaches them, they are not sent again. While it runs, it reads the partition back now and then
 * ({@link #confirm}) and drops the kept rows it finds.
 * <p>
 * A row is the same row when its key and its serialized bytes are (a whole-session row's key is
 * also that of its non-final versions).
 */
final class FinalRowOutbox {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FinalRowOutbox.class);

    /** The task's partition of the rows topic, as the outbox reads it. */
    interface OutputLog {
        /** Waits until the partition holds no open transaction, aborting those that can never end; a line for each abort. */
        List<String> settle();

        /** The partition's last stable offset: a read_committed reader's end. */
        long end();

        long beginning();

        /** Its committed records from {@code from} up to, not including, {@code until}: key and value. */
        void scan(long from, long until, BiConsumer<String, byte[]> each);

        String topic();

        int partition();

        /** How many partitions the rows topic has. */
        int partitions();
    }

    /** A row as kept: its key, serialized value and record timestamp. */
    record Row(String key, byte[] value, long timestamp) {}

    /** Where the outbox's keys begin in the sessions store: before every session's. */
    static final String META = AggregateProcessor.PART + "o";
    static final String PAGES = META + "/";
    /**
     * How far back a task reads its partition when its state holds sessions but no outbox yet (the
     * state of an earlier version): further than one transaction's rows.
     */
    static final long LOOKBACK = 65_536;

    private final KeyValueStore<String, byte[]> store;
    private final OutputLog log;
    private final Predicate<byte[]> isFinal;
    private final List<Row> pending = new ArrayList<>();
    /** Final rows in the partition that the state has not emitted yet (read back at the start), by key. */
    private final Map<String, byte[]> alreadyOut = new HashMap<>();
    private long nextPage;
    private long scanFrom;
    private long keptRows;
    private boolean started;
    /** The last session asked about, and whether its rows go to this task's partition. */
    private String lastSession;
    private boolean lastSessionHere;
    private boolean warnedElsewhere;

    /**
     * @param isFinal whether a serialized row in the topic is a final one
     */
    FinalRowOutbox(KeyValueStore<String, byte[]> store, OutputLog log, Predicate<byte[]> isFinal) {
        this.store = store;
        this.log = log;
        this.isFinal = isFinal;
    }

    boolean started() {
        return started;
    }

    /**
     * As the task starts, before it emits anything: settles the partition, reads it back from where
     * the state last looked, and sends again ({@code resend}) every kept row not there. Those stay
     * kept until seen. {@code stateEmpty}: the task's state holds nothing, so nothing in the topic is
     * its doing.
     * @return the rows sent again
     */
    int start(boolean stateEmpty, java.util.function.Consumer<Row> resend) {
        for (String aborted : log.settle()) {
            LOG.warn("aborted a transaction left open on the rows' partition by an earlier incarnation of the task: {}", aborted);
        }
        long end = log.end();
        byte[] meta = store.get(META);
        long from;
        if (meta != null) {
            readMeta(meta);
            from = scanFrom;
        } else {
            nextPage = 0;
            from = stateEmpty ? end : Math.max(log.beginning(), end - LOOKBACK);
        }
        Map<String, Row> kept = new LinkedHashMap<>();
        List<String> pages = new ArrayList<>();
        forEachPage((page, rows) -> {
            pages.add(page);
            for (Row r : rows) kept.put(r.key, r);
        });
        long[] seen = {0};
        log.scan(from, end, (key, value) -> {
            Row r = kept.get(key);
            if (r != null && Arrays.equals(r.value, value)) {
                kept.remove(key);
                seen[0]++;
            } else if (value != null && isFinal.test(value)) {
                alreadyOut.put(key, value);
            }
        });
        pages.forEach(store::delete);
        for (Row r : kept.values()) {
            resend.accept(r);
            pending.add(r);
        }
        if (!kept.isEmpty()) {
            LOG.warn("{} final row(s) kept in the state were not in {}-{} from offset {} to {}: sent again", kept.size(),
                    log.topic(), log.partition(), from, end);
        }
        if (!alreadyOut.isEmpty()) {
            LOG.warn("{} final row(s) in {}-{} from offset {} to {} are ahead of the committed state: they will not be sent"
                    + " again when the state reaches them", alreadyOut.size(), log.topic(), log.partition(), from, end);
        }
        keptRows = 0;
        scanFrom = end;
        started = true;
        writePage();
        store.put(META, meta());
        return kept.size();
    }

    /**
     * A final row about to be sent: false when the topic has it already (a transaction committed it
     * and lost the state that emitted it), else it is kept (written at {@link #writePage}).
     */
    boolean emitting(String session, String key, byte[] value, long timestamp) {
        if (!alreadyOut.isEmpty()) {
            byte[] out = alreadyOut.remove(key);
            if (out != null && Arrays.equals(out, value)) return false;
        }
        if (!here(session)) return true;
        pending.add(new Row(key, value, timestamp));
        return true;
    }

    /** Writes the rows emitted since the last call as one entry: before the task's next commit can come. */
    void writePage() {
        if (pending.isEmpty()) return;
        store.put(pageKey(nextPage++), encode(pending));
        store.put(META, meta());
        keptRows += pending.size();
        pending.clear();
    }

    /** The rows kept and not yet seen. */
    long kept() {
        return keptRows + pending.size();
    }

    /**
     * Reads the partition back from where it last looked to its last stable offset, and drops the
     * kept rows it finds. The rows of transactions not yet committed lie after that offset: they stay.
     */
    void confirm() {
        writePage();
        long end = log.end();
        if (keptRows > 0 && end > scanFrom) {
            Map<String, Row> kept = new HashMap<>();
            Map<String, List<Row>> pages = new LinkedHashMap<>();
            forEachPage((page, rows) -> {
                pages.put(page, rows);
                for (Row r : rows) kept.put(r.key, r);
            });
            java.util.Set<String> seen = new java.util.HashSet<>();
            log.scan(scanFrom, end, (key, value) -> {
                Row r = kept.get(key);
                if (r != null && Arrays.equals(r.value, value)) seen.add(key);
            });
            keptRows = 0;
            for (Map.Entry<String, List<Row>> p : pages.entrySet()) {
                List<Row> left = p.getValue().stream().filter(r -> !seen.contains(r.key)).toList();
                if (left.isEmpty()) store.delete(p.getKey());
                else if (left.size() < p.getValue().size()) store.put(p.getKey(), encode(left));
                keptRows += left.size();
            }
        }
        if (end != scanFrom) {
            scanFrom = end;
            store.put(META, meta());
        }
    }

    private boolean here(String session) {
        if (!session.equals(lastSession)) {
            lastSession = session;
            lastSessionHere = SessionPartitioner.partition(session, log.partitions()) == log.partition();
            if (!lastSessionHere && !warnedElsewhere) {
                warnedElsewhere = true;
                LOG.warn("the rows topic has {} partitions, not as many as the input topics: rows of session {} go to another"
                        + " task's partition, and are not read back after a restart", log.partitions(), session);
            }
        }
        return lastSessionHere;
    }

    private void forEachPage(BiConsumer<String, List<Row>> each) {
        List<KeyValue<String, byte[]>> all = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(PAGES, new StringSerializer())) {
            it.forEachRemaining(all::add);
        }
        for (KeyValue<String, byte[]> kv : all) each.accept(kv.key, decode(kv.value));
    }

    static String pageKey(long page) {
        String digits = Long.toString(page);
        return PAGES + "0".repeat(Math.max(0, 20 - digits.length())) + digits;
    }

    private byte[] meta() {
        ByteArrayOutputStream b = new ByteArrayOutputStream(24);
        try (DataOutputStream o = new DataOutputStream(b)) {
            o.writeByte(1);
            o.writeLong(nextPage);
            o.writeLong(scanFrom);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    private void readMeta(byte[] meta) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(meta))) {
            int version = in.readByte();
            if (version != 1) throw new IllegalStateException("outbox record version " + version + " is newer than this build reads");
            nextPage = in.readLong();
            scanFrom = in.readLong();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] encode(List<Row> rows) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(rows.size() * 320);
        try (DataOutputStream o = new DataOutputStream(b)) {
            o.writeInt(rows.size());
            for (Row r : rows) {
                o.writeLong(r.timestamp);
                o.writeUTF(r.key);
                o.writeInt(r.value.length);
                o.write(r.value);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    static List<Row> decode(byte[] page) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(page))) {
            int n = in.readInt();
            List<Row> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long ts = in.readLong();
                String key = in.readUTF();
                byte[] v = new byte[in.readInt()];
                in.readFully(v);
                rows.add(new Row(key, v, ts));
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
