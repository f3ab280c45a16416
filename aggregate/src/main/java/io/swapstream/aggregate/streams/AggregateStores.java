package io.swapstream.aggregate.streams;

import io.swapstream.schemas.avro.ThreadInfo;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.avro.TraceSession;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.stage.InputRecordReader;
import io.swapstream.stage.RedoLog;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The aggregate stage's state a session's statistics are rebuilt from, a store per concern; exactly-once
 * v2 commits them with the rows. Keys of a session's parts are the session, NUL, then the part: no
 * session key holds NUL, so a prefix holds one session's parts only.
 *
 * @param progress     each session's {@link AggregateSession}, under the session's key (what queries read)
 * @param accumulators each thread's whole-session accumulator, and its open window's, and the open window's wake
 *                     edges, as of the last flush
 * @param redo         the batches taken since ({@link RedoLog})
 * @param labels       the thread records, under {@code session/tid}
 */
record AggregateStores(KeyValueStore<String, byte[]> progress, KeyValueStore<String, byte[]> accumulators,
                       RedoLog redo, KeyValueStore<String, ThreadInfo> labels) {
    static final char SEPARATOR = RedoLog.SEPARATOR;

    static AggregateStores of(ProcessorContext<?, ?> context, InputRecordReader inputs, String inputTopic) {
        return new AggregateStores(context.getStateStore(AggregateTopology.SESSIONS_STORE),
                context.getStateStore(AggregateTopology.ACCUMULATORS_STORE),
                new RedoLog(context.getStateStore(AggregateTopology.REDO_STORE), inputs, inputTopic),
                context.getStateStore(AggregateTopology.THREADS_STORE));
    }

    /** Adds the stage's stores to {@code builder}: these four, the stats store and the session records' store. */
    static void addTo(StreamsBuilder builder, RecordSerdeFactory serdes, Map<String, ?> config) {
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(AggregateTopology.SESSION_RECORDS_STORE),
                Serdes.String(), serdes.serde(TraceSession.class, config)).withCachingEnabled());
        // no cache: each accumulator is written once per flush, and thousands of them overflow one
        for (String name : new String[] {AggregateTopology.SESSIONS_STORE, AggregateTopology.ACCUMULATORS_STORE, AggregateTopology.REDO_STORE}) {
            builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.ByteArray())
                    .withCachingDisabled());
        }
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(AggregateTopology.THREADS_STORE), Serdes.String(),
                serdes.serde(ThreadInfo.class, config)).withCachingEnabled());
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(AggregateTopology.STATS_STORE), Serdes.String(),
                serdes.serde(ThreadStats.class, config)));
    }

    /** The open window's wake edges (SessionStatistics.openEdges), as of the last flush. */
    static String edgesKey(String session) {
        return session + SEPARATOR + "e";
    }

    static String wholePrefix(String session) {
        return session + SEPARATOR + "t";
    }

    /** One key per thread for whichever window is open (the start is in the value): closed windows leave no keys behind. */
    static String windowPrefix(String session) {
        return session + SEPARATOR + "w";
    }

}
