package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.stage.BatchSequence;
import io.swapstream.stage.IncompleteFrom;
import io.swapstream.stage.InputRecordReader;
import io.swapstream.stage.StateStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds each session's switch batches, with the thread records they carry, to the offline
 * {@link SessionStatistics} ({@link OpenSession}). The accumulators a session's batches changed are written
 * every {@link SwapstreamConfig#AGGREGATE_FLUSH_BATCHES} batches or {@link SwapstreamConfig#AGGREGATE_FLUSH_TRACE_MS}
 * of trace time (encoding a quantile sketch per thread per batch would cost more than the statistics; threads that
 * stopped running leave memory at a write), and the batches since are noted as offsets of the input
 * topic, so a restarted task takes the accumulators, reads those batches back and takes them again,
 * emitting nothing. A window is emitted once, {@code final}, as soon as the session's switches pass its
 * end; whole-session rows are emitted as they change (with windows, to the query store alone), and {@code final}
 * to the topic once the decode stage's end-of-session record says every batch and thread record has arrived.
 * Exactly-once v2 commits the rows with the state that emitted them, so a restore neither loses nor doubles one.
 * Rows reach read_committed readers at the next commit ({@code commit.interval.ms}): a commit asked at each
 * window's close or session's end was a transaction per host at a fleet's window end, and held the stream
 * thread there (docs/performance.md).
 */
final class AggregateProcessor implements Processor<String, AggregateInput, String, SpecificRecord> {
    private static final Logger LOG = LoggerFactory.getLogger(AggregateProcessor.class);
    private final AggregateSettings settings;
    private final Deserializer<SwitchBatch> batches;
    private final RowIndexes indexes;
    private ProcessorContext<String, SpecificRecord> context;
    private AggregateStores stores;
    private KeyValueStore<String, TraceSession> sessionRecords;
    private RowEmitter rows;
    private AggregateMetrics metrics;
    private InputRecordReader inputs;
    /** Each batch is taken whole before the next is read: one batch's columns serve them all. */
    private SwitchBatch reused;
    /** Sessions in this task's memory: a cache of what the stores hold as of the last record. */
    private final Map<String, OpenSession> open = new HashMap<>();

    AggregateProcessor(AggregateSettings settings, Deserializer<SwitchBatch> batches, RowIndexes indexes) {
        this.settings = settings;
        this.batches = batches;
        this.indexes = indexes;
    }

    @Override
    public void init(ProcessorContext<String, SpecificRecord> context) {
        this.context = context;
        this.inputs = InputRecordReader.of(context, "aggregate-redo");
        this.stores = AggregateStores.of(context, inputs, settings.batches().name());
        this.sessionRecords = context.getStateStore(AggregateTopology.SESSION_RECORDS_STORE);
        this.metrics = new AggregateMetrics(context);
        this.rows = new RowEmitter(context, settings, metrics, indexes);
        open.clear();
        context.schedule(Duration.ofMillis(settings.emitIntervalMs()), PunctuationType.WALL_CLOCK_TIME,
                now -> {
                    int inMemory = 0;
                    for (OpenSession o : open.values()) {
                        o.emitChanged();
                        inMemory += o.accumulatorsInMemory();
                    }
                    metrics.accumulatorsInMemory.record(inMemory);
                });
        context.schedule(Duration.ofMillis(retentionLookEvery(settings.retentionMs())), PunctuationType.WALL_CLOCK_TIME, this::forgetEnded);
    }

    @Override
    public void close() {
        open.clear();
        if (rows != null) rows.close();
        if (metrics != null) metrics.close();
        if (inputs != null) inputs.close();
    }

    /**
     * A tenth of the retention, from a second to 10 minutes: a session stays at most that much longer, and
     * a look takes out the sessions that ended in one such span (each look reads every session's progress).
     */
    static long retentionLookEvery(long retentionMs) {
        return Math.max(1000, Math.min(retentionMs / 10, 600_000));
    }

    @Override
    public void process(Record<String, AggregateInput> record) {
        if (record.key() == null || record.value() == null) {
            skip(record, "no key or no value");
            return;
        }
        String session = SessionPartitioner.session(record.key());
        RuntimeException failed = io.swapstream.stage.RecordFailures.of(() -> take(session, record));
        if (failed != null) {
            // the session is read again from the stores: what this record changed in memory is forgotten
            open.remove(session);
            metrics.sessionsOpen.record(open.size());
            skip(record, failed.toString());
        }
    }

    /** A record that cannot be taken is skipped, with its reason: a task that stopped on it would meet it at every restart. */
    private void skip(Record<String, AggregateInput> record, String reason) {
        LOG.error("record {} (key {}) cannot be taken, skipped: {}", io.swapstream.stage.RecordFailures.where(context), record.key(), reason);
    }

    private void take(String session, Record<String, AggregateInput> record) {
        AggregateInput in = record.value();
        if (in.batch() == null && in.session() == null) return; // a tombstone
        OpenSession o = open(session);
        o.timestamp = record.timestamp();
        if (o.state.done) {
            long seq = in.batch() != null ? BatchSequence.of(record.headers()) : -1;
            if (seq >= 0 && seq < o.state.nextSequence) {
                metrics.duplicateBatches.record();
            } else if (in.batch() != null) {
                o.state.lateBatches++;
                stores.progress().put(session, o.state.encode());
            }
            return;
        }
        if (in.batch() != null) {
            if (!takeBatch(o, record.key(), in.batch(), BatchSequence.of(record.headers()), IncompleteFrom.of(record.headers()))) return;
        } else {
            takeSessionRecord(o, in.session());
        }
        o.save();
        if (o.state.allArrived()) finish(o);
    }

    /**
     * Takes a batch numbered {@code seq} (-1: not numbered), which says its session's times are not known from
     * {@code incompleteFrom} (null: it does not); false when the session has taken that number already.
     */
    private boolean takeBatch(OpenSession o, String key, byte[] bytes, long seq, Long incompleteFrom) {
        RecordMetadata m = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record is being processed"));
        boolean numbered = seq >= 0;
        if (numbered && seq < o.state.nextSequence) {
            // only an input offset moved back by hand (kafka-streams-application-reset, say) brings one again
            if (!o.skipping) {
                LOG.warn("session {}: batch {} at {}-{} offset {} was taken before: skipped, and any after it that were", o.session, seq,
                        m.topic(), m.partition(), m.offset());
            }
            o.skipping = true;
            metrics.duplicateBatches.record();
            return false;
        }
        // read before anything of the session changes: a batch that cannot be read is skipped whole
        SwitchBatch b = read(key, bytes);
        o.skipping = false;
        if (numbered && seq > o.state.nextSequence) {
            LOG.error("session {}: batches {} to {} never came to {}-{}: its statistics will miss them", o.session, o.state.nextSequence,
                    seq - 1, m.topic(), m.partition());
        }
        if (numbered) o.state.nextSequence = seq + 1;
        metrics.switchesIn.record(b.count());
        if (b.count() > 0) {
            metrics.taken(b.timeNanos(b.count() - 1));
            o.tookSwitchesUntil(b.timeNanos(b.count() - 1));
        }
        o.noteBatch(InputRecordReader.reference(m.partition(), m.offset()), bytes.length);
        o.state.host = b.host();
        // what a session that ended incomplete sent at its end, or a merge that let switches out early sent from then on:
        // the windows it closes past this time are marked
        if (incompleteFrom != null) o.incompleteFrom = o.incompleteFrom == null ? incompleteFrom : Math.min(o.incompleteFrom, incompleteFrom);
        o.statistics.accept(b);
        o.state.switches += b.count();
        return true;
    }

    /** Takes a session record: the session's start, or its end with what was sent. */
    private void takeSessionRecord(OpenSession o, TraceSession t) {
        sessionRecords.put(o.session, t);
        if (t.getEndReason() == null) return;
        o.state.expectedSwitches = t.getSwitchCount() == null ? 0 : t.getSwitchCount();
        o.state.expectedThreads = t.getThreadRecords();
        o.state.endReason = t.getEndReason();
        if (o.state.host == null) o.state.host = t.getHost();
    }

    private SwitchBatch read(String key, byte[] bytes) {
        if (batches instanceof SwitchBatchSerde serde) return reused = serde.deserialize(key, bytes, reused);
        return batches.deserialize(key, bytes);
    }

    /** The session in memory, or restored: its state, then the batches since the last flush, again, without output. */
    private OpenSession open(String session) {
        OpenSession o = open.get(session);
        if (o != null) return o;
        o = new OpenSession(session, AggregateSession.decode(stores.progress().get(session)), stores, rows, settings, metrics);
        if (o.state.done) return o;
        o.replaying = true;
        OpenSession restoring = o;
        stores.redo().replay(session, o.state.flushedBatches, o.state.batches, (i, bytes) -> restoring.statistics.accept(read(session, bytes)));
        o.replaying = false;
        open.put(session, o);
        metrics.sessionsOpen.record(open.size());
        return o;
    }

    private void finish(OpenSession o) {
        // a session finishes once its end record has come (it is in the store): one cut short, or that lost anything, is not complete
        TraceSession end = sessionRecords.get(o.session);
        o.finish(context.currentSystemTimeMs(), end != null && end.getComplete() && o.incompleteFrom == null);
        open.remove(o.session);
        metrics.sessionsOpen.record(open.size());
        metrics.sessionsEnded.record();
    }

    /** The session's thread labels, kept after its end for the query API's readier names. */
    private void forgetLabels(String session) {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, io.swapstream.schemas.avro.ThreadInfo> it = stores.labels().prefixScan(session + "/", new StringSerializer())) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(k -> StateStores.remove(stores.labels(), k));
    }

    /** Ended sessions whose retention has passed leave the stores (the topic keeps their rows for the broker's retention). */
    private void forgetEnded(long now) {
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, TraceSession> it = sessionRecords.all()) {
            while (it.hasNext()) {
                String session = it.next().key;
                if (open.containsKey(session)) continue;
                byte[] value = stores.progress().get(session);
                AggregateSession s = value == null ? null : AggregateSession.decode(value);
                if (s != null && s.done && now - s.endedMs >= settings.retentionMs()) expired.add(session);
            }
        }
        for (String session : expired) {
            int n = rows.forget(session);
            forgetLabels(session);
            StateStores.remove(sessionRecords, session);
            StateStores.remove(stores.progress(), session);
            metrics.sessionsForgotten.record();
            LOG.info("session {} ended more than {} s ago: it left the stores ({} rows)", session, settings.retentionMs() / 1000, n);
        }
    }
}
