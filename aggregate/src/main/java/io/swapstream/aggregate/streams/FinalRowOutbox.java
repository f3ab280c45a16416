package io.swapstream.aggregate.streams;

import io.swapstream.decode.streams.StateStores;
import io.swapstream.schemas.SessionPartitioner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import io.swapstream.schemas.SwapstreamConfig;
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
 * once the batches are taken again. So when the task starts it reads its output partition back from where it last looked, sends again each kept row it
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
        /** The partition's last stable offset: a read_committed reader's end. */
        long end();

        /** Its committed records from {@code from} (or its first, if later) up to, not including, {@code until}: key and value. */
        void scan(long from, long until, BiConsumer<String, byte[]> each);

        String topic();

        int partition();

        /** How many partitions the rows topic has. */
        int partitions();
    }

    /** A row as kept: its key, serialized value and record timestamp. */
    record Row(String key, byte[] value, long timestamp) {}

    /**
     * A page's most bytes: a session's end emits a row per thread at once (6,929 threads, 5 MiB of rows),
     * and one changelog record that large would not fit the changelog's segment.
     */
    static final int PAGE_BYTES = 1 << 20;

    /** Where the outbox's keys begin in the sessions store: before every session's. */
    static final String META = AggregateProcessor.PART + "o";
    static final String PAGES = META + "/";

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
     * As the task starts, before it emits anything: reads the partition back from where
     * the state last looked, and sends again ({@code resend}) every kept row not there. Those stay
     * kept until seen. {@code stateEmpty}: the task's state holds nothing, so nothing in the topic is
     * its doing.
     * @return the rows sent again
     */
    int start(boolean stateEmpty, java.util.function.Consumer<Row> resend) {
        long end = log.end();
        byte[] meta = store.get(META);
        // a state without an outbox yet (an earlier version's) looks back; the scan starts no earlier than the topic does
        long from = meta != null ? readScanFrom(meta) : stateEmpty ? end : end - SwapstreamConfig.READ_BACK_RECORDS;
        Map<String, List<Row>> pages = pages();
        Set<String> seen = readBack(pages, from, end, (key, value) -> {
            if (value != null && isFinal.test(value)) alreadyOut.put(key, value);
        });
        // every page goes; what was not seen is kept again, in one page from 0
        pages.keySet().forEach(k -> StateStores.remove(store, k));
        nextPage = 0;
        for (List<Row> rows : pages.values()) {
            for (Row r : rows) {
                if (seen.contains(r.key)) continue;
                resend.accept(r);
                pending.add(r);
            }
        }
        int resent = pending.size();
        if (resent > 0) {
            LOG.warn("{} final row(s) kept in the state were not in {}-{} from offset {} to {}: sent again", resent,
                    log.topic(), log.partition(), from, end);
        }
        if (!alreadyOut.isEmpty()) {
            LOG.warn("{} final row(s) in {}-{} from offset {} to {} are ahead of the committed state: they will not be sent"
                    + " again when the state reaches them", alreadyOut.size(), log.topic(), log.partition(), from, end);
        }
        keptRows = 0;
        started = true;
        writePage();
        lookedTo(end);
        return resent;
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

    /** Writes the rows emitted since the last call, in pages of at most {@link #PAGE_BYTES}: before the task's next commit can come. */
    void writePage() {
        int from = 0;
        long bytes = 0;
        for (int i = 0; i < pending.size(); i++) {
            long size = encodedSize(pending.get(i));
            if (i > from && bytes + size > PAGE_BYTES) {
                store.put(pageKey(nextPage++), encode(pending.subList(from, i)));
                from = i;
                bytes = 0;
            }
            bytes += size;
        }
        if (from < pending.size()) store.put(pageKey(nextPage++), encode(pending.subList(from, pending.size())));
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
        if (end == scanFrom) return;
        if (keptRows > 0) {
            Map<String, List<Row>> pages = pages();
            Set<String> seen = readBack(pages, scanFrom, end, (key, value) -> { });
            keptRows = 0;
            for (Map.Entry<String, List<Row>> p : pages.entrySet()) {
                List<Row> left = p.getValue().stream().filter(r -> !seen.contains(r.key)).toList();
                if (left.isEmpty()) StateStores.remove(store, p.getKey());
                else if (left.size() < p.getValue().size()) store.put(p.getKey(), encode(left));
                keptRows += left.size();
            }
        }
        lookedTo(end);
    }

    /**
     * The keys of the kept rows in {@code pages} found in the partition from {@code from} up to
     * {@code end}, key and bytes alike; {@code other} gets each record that is not one of them.
     */
    private Set<String> readBack(Map<String, List<Row>> pages, long from, long end, BiConsumer<String, byte[]> other) {
        Map<String, Row> kept = new HashMap<>();
        pages.values().forEach(rows -> rows.forEach(r -> kept.put(r.key, r)));
        Set<String> seen = new HashSet<>();
        log.scan(from, end, (key, value) -> {
            Row r = kept.get(key);
            if (r != null && Arrays.equals(r.value, value)) seen.add(key);
            else other.accept(key, value);
        });
        return seen;
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

    /** The kept rows, by page, in page order. */
    private Map<String, List<Row>> pages() {
        Map<String, List<Row>> pages = new LinkedHashMap<>();
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(PAGES, new StringSerializer())) {
            it.forEachRemaining(kv -> pages.put(kv.key, decode(kv.value)));
        }
        return pages;
    }

    static String pageKey(long page) {
        String digits = Long.toString(page);
        return PAGES + "0".repeat(Math.max(0, 20 - digits.length())) + digits;
    }

    /**
     * Where the next read-back starts: the partition's last stable offset when this one looked, put in
     * the state only then (the pages need no count kept: a start rewrites them from 0).
     */
    private void lookedTo(long end) {
        scanFrom = end;
        store.put(META, ByteBuffer.allocate(9).put((byte) 1).putLong(end).array());
    }

    private static long readScanFrom(byte[] meta) {
        if (meta[0] != 1) throw new IllegalStateException("outbox record version " + meta[0] + " is newer than this build reads");
        return ByteBuffer.wrap(meta, 1, 8).getLong();
    }

    /** A row's bytes in a page (its key counted as UTF-8 of up to 3 bytes a char, as writeUTF may take). */
    static long encodedSize(Row r) {
        return 8 + 2 + 3L * r.key.length() + 4 + r.value.length;
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
