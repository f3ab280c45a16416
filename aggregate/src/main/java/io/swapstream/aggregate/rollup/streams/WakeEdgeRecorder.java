package io.swapstream.aggregate.rollup.streams;

import io.swapstream.schemas.avro.WakeEdge;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps {@code etw.wake-edges} for the query API ({@code /api/wakes}): each host's (each session's) record
 * of an edge and window under {@code window/waker/woken/session}, the last {@link RollupSettings#keepWindows}
 * window starts of this task. Every record of one edge and window has one key on the topic, so they meet
 * in one task, which merges them when asked. A record taken again (a restart) replaces itself.
 */
final class WakeEdgeRecorder implements Processor<String, WakeEdge, Void, Void> {
    private final int keepWindows;
    private KeyValueStore<String, WakeEdge> store;
    /** The window starts the store holds. */
    private final TreeSet<Long> starts = new TreeSet<>();

    WakeEdgeRecorder(RollupSettings settings) {
        this.keepWindows = settings.keepWindows();
    }

    /**
     * The store key of an edge record: its window (zero-padded: keys sort in time), then the two processes and
     * the session apart by NUL, which no name holds (a process name may hold '/').
     */
    static String storeKey(WakeEdge e) {
        return RollupProcessor.windowKey(e.getWindowStartNanos()) + "/" + e.getWakerProcess() + "\0" + e.getWokenProcess() + "\0"
                + e.getSession();
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        store = context.getStateStore(RollupTopology.WAKE_EDGES_STORE);
        starts.clear();
        // a record of each window, seeking past the rest: the store holds every host's edges of each kept window
        String from = null;
        while (true) {
            try (KeyValueIterator<String, WakeEdge> it = store.range(from, null)) {
                if (!it.hasNext()) break;
                long start = it.next().value.getWindowStartNanos();
                starts.add(start);
                from = RollupProcessor.windowKey(start) + "0";
            }
        }
    }

    @Override
    public void process(Record<String, WakeEdge> record) {
        WakeEdge e = record.value();
        if (e == null) return;
        if (starts.size() >= keepWindows && e.getWindowStartNanos() < starts.first()) return; // older than every window kept
        store.put(storeKey(e), e);
        starts.add(e.getWindowStartNanos());
        while (starts.size() > keepWindows) drop(starts.pollFirst());
    }

    private void drop(long start) {
        List<String> keys = new ArrayList<>();
        // every key of the window: '0' sorts right after '/', whatever the names after it
        try (KeyValueIterator<String, WakeEdge> it = store.range(RollupProcessor.windowKey(start) + "/", RollupProcessor.windowKey(start) + "0")) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(store::delete);
    }
}
