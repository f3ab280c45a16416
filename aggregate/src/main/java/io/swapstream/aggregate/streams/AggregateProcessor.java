package io.swapstream.aggregate.streams;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsAccumulator;
import io.swapstream.decode.streams.AvroRecords;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.etw.LogfileHeader;
import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Feeds each session's switches to the offline {@link SessionStatistics}, its accumulators kept in
 * a {@link WriteBackStore}. Changed statistics are emitted every emit interval, and all of a
 * session's statistics once the decode stage's completion record says every switch and thread
 * record has arrived.
 */
final class AggregateProcessor implements Processor<String, Object, String, ThreadStats> {
    private final long windowNanos;
    private final long emitIntervalMs;
    private ProcessorContext<String, ThreadStats> context;
    private WriteBackStore<ThreadStatsAccumulator> accumulators;
    private WriteBackStore<AggregateProgress> progress;
    private KeyValueStore<String, ThreadInfo> labels;
    private KeyValueStore<String, ThreadStats> latest;
    private KeyValueStore<String, Long> done;
    private final Map<String, SessionStatistics> sessions = new HashMap<>();
    private final Set<String> changed = new LinkedHashSet<>();
    private final Map<String, String> hosts = new HashMap<>();

    AggregateProcessor(long windowNanos, long emitIntervalMs) {
        this.windowNanos = windowNanos;
        this.emitIntervalMs = emitIntervalMs;
    }

    @Override
    public void init(ProcessorContext<String, ThreadStats> context) {
        this.context = context;
        this.accumulators = context.getStateStore(AggregateTopology.ACCUMULATORS_STORE);
        this.progress = context.getStateStore(AggregateTopology.PROGRESS_STORE);
        this.labels = context.getStateStore(AggregateTopology.THREADS_STORE);
        this.latest = context.getStateStore(AggregateTopology.STATS_STORE);
        this.done = context.getStateStore(AggregateTopology.DONE_STORE);
        context.schedule(Duration.ofMillis(emitIntervalMs), PunctuationType.WALL_CLOCK_TIME, now -> emitChanged());
    }

    /** A thread's accumulator as last fetched, so a switch costs no key string and no store lookup. */
    private static final class Slot {
        final String key;
        ThreadStatsAccumulator accumulator;
        long storeGeneration = -1;
        long emitGeneration = -1;

        Slot(String key) {
            this.key = key;
        }
    }

    private record SlotId(int tid, long windowStart) {}

    private final Map<String, Map<SlotId, Slot>> slots = new HashMap<>();
    private long emitGeneration;

    private SessionStatistics statistics(String session) {
        return sessions.computeIfAbsent(session, s -> {
            Map<SlotId, Slot> bySlot = slots.computeIfAbsent(s, k -> new HashMap<>());
            return new SessionStatistics(windowNanos, (tid, start) -> {
                Slot slot = bySlot.computeIfAbsent(new SlotId(tid, start),
                        id -> new Slot(ThreadStatsRecords.key(s, tid, start == SessionStatistics.WHOLE ? null : start)));
                if (slot.storeGeneration != accumulators.generation()) {
                    slot.accumulator = accumulators.get(slot.key); // marks it for the next write-back
                    slot.storeGeneration = accumulators.generation();
                }
                if (slot.emitGeneration != emitGeneration) {
                    changed.add(slot.key);
                    slot.emitGeneration = emitGeneration;
                }
                return slot.accumulator;
            });
        });
    }

    @Override
    public void process(Record<String, Object> record) {
        String session = SessionPartitioner.session(record.key());
        AggregateProgress p = progress.get(session);
        Object v = record.value();
        if (v instanceof ContextSwitch s) {
            hosts.put(session, s.getHost());
            statistics(session).accept(AvroRecords.of(s));
            p.switches++;
        } else if (v instanceof ThreadInfo t) {
            labels.put(record.key(), t);
            p.threads++;
        } else if (v instanceof TraceSession t && t.getEndReason() != null) {
            p.expectedSwitches = t.getSwitchCount() == null ? 0 : t.getSwitchCount();
            p.expectedThreads = t.getThreadRecords();
        }
        if (p.complete()) emitSession(session, p);
    }

    private void emitChanged() {
        for (String key : changed) emit(key, accumulators.peek(key));
        changed.clear();
        emitGeneration++;
    }

    private void emitSession(String session, AggregateProgress p) {
        for (KeyValue<String, ThreadStatsAccumulator> kv : accumulators.all(session + "/")) emit(kv.key, kv.value);
        changed.removeIf(k -> k.startsWith(session + "/"));
        sessions.remove(session);
        slots.remove(session);
        hosts.remove(session);
        p.done = true;
        done.put(session, p.switches);
    }

    private void emit(String key, ThreadStatsAccumulator a) {
        String[] parts = key.split("/");
        String session = parts[0];
        int tid = Integer.parseInt(parts[1]);
        boolean windowed = parts.length > 2;
        long start = windowed ? Long.parseLong(parts[2]) : a.firstNanos();
        long end = windowed ? start + windowNanos : a.lastNanos();
        ThreadInfo info = labels.get(session + "/" + tid);
        String host = hosts.getOrDefault(session, LogfileHeader.hostOf(session));
        ThreadStats stats = ThreadStatsRecords.of(a.toStats(session, host, tid,
                info == null ? null : info.getProcessId(), info == null ? null : info.getProcessName(),
                info == null ? null : info.getThreadName(), start, end));
        latest.put(key, stats);
        context.forward(new Record<>(key, stats, context.currentSystemTimeMs()));
    }

}
