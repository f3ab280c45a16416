package io.swapstream.local;

import io.swapstream.aggregate.rollup.RollupGroup;
import io.swapstream.aggregate.rollup.streams.RollupControl;
import io.swapstream.aggregate.rollup.streams.RollupTopology;
import io.swapstream.http.StageMetrics;
import io.swapstream.schemas.avro.ProcessStats;
import io.swapstream.schemas.avro.ThreadStats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The rollup stage inside {@code swapstream run}: it reads only the rows written after it started (this run's,
 * on a shared broker too), and closes its windows at the end of the run's input rather than after the grace.
 */
public final class RollupRun implements AutoCloseable {
    private final KafkaStreams streams;
    private final Topology topology;
    private final RollupControl control = new RollupControl();

    private RollupRun(Properties config) {
        this.topology = Pipeline.rollupTopology(config, control);
        this.streams = new KafkaStreams(topology, config);
    }

    /** Starts the stage and waits until it runs (its input positions at the topics' ends). */
    public static RollupRun start(String bootstrap, String appId, Path stateDir, String prefix, int partitions, short replication,
                           Map<String, String> overrides, long deadlineNanos) throws Exception {
        return start(bootstrap, appId, stateDir, prefix, partitions, replication, overrides, deadlineNanos, false);
    }

    /** @param fromStart read every row on the topic (bench), not only those written from now on */
    public static RollupRun start(String bootstrap, String appId, Path stateDir, String prefix, int partitions, short replication,
                           Map<String, String> overrides, long deadlineNanos, boolean fromStart) throws Exception {
        Map<String, String> o = new java.util.HashMap<>(overrides);
        if (!fromStart) o.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "latest");
        Properties config = StageConfig.streams(StageConfig.ROLLUP, bootstrap, appId, stateDir, prefix, replication, o);
        RollupRun run = new RollupRun(config);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            StageConfig.createChangelogs(admin, run.topology, config, partitions);
        }
        run.streams.start();
        while (run.streams.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > deadlineNanos || Pipeline.stopped(run.streams)) {
                run.close();
                throw new ServiceException("the rollup stage was not running within --timeout (" + run.streams.state() + ")");
            }
            Thread.sleep(10);
        }
        return run;
    }

    /**
     * The per-process rows of {@code windowRows} (the run's final window rows), from the stage: once it has taken
     * them all, every window closes, and the rows are read from its store.
     */
    public List<ProcessStats> processRows(List<ThreadStats> windowRows, long deadlineNanos) throws InterruptedException {
        // the groups the stage will write: each row's process name and window (no merging here; the stage does that)
        // and how many thread rows each will have merged: a window that closed before a host's rows came goes out again
        // as a revision with them, and only that revision is the run's row
        java.util.Map<String, Long> keys = new java.util.LinkedHashMap<>();
        for (ThreadStats t : windowRows) {
            keys.merge(RollupTopology.storeKey(RollupGroup.nameOf(RollupGroup.Kind.PROCESS, t), t.getWindowStartNanos()), 1L, Long::sum);
        }
        awaitTaken(windowRows.size(), deadlineNanos);
        control.endOfInput();
        List<ProcessStats> out = new ArrayList<>();
        while (true) {
            out.clear();
            try {
                ReadOnlyKeyValueStore<String, ProcessStats> store = streams.store(StoreQueryParameters.fromNameAndType(
                        RollupTopology.PROCESS_ROWS_STORE, QueryableStoreTypes.keyValueStore()));
                for (java.util.Map.Entry<String, Long> k : keys.entrySet()) {
                    ProcessStats p = store.get(k.getKey());
                    if (p != null && p.getThreads() == k.getValue()) out.add(p);
                }
            } catch (InvalidStateStoreException e) {
                // rebalancing: ask again
            }
            if (out.size() == keys.size()) return out;
            check(deadlineNanos);
            Thread.sleep(20);
        }
    }

    /** The run's input has ended: every open window closes. */
    public void endOfInput() {
        control.endOfInput();
    }

    /** Waits until the stage has taken {@code rows} rows. */
    public void awaitTaken(long rows, long deadlineNanos) throws InterruptedException {
        while (StageMetrics.total(streams, StageConfig.ROLLUP, io.swapstream.stage.StageSensors.ROWS_IN + "-total") < rows) {
            check(deadlineNanos);
            Thread.sleep(5);
        }
    }

    private void check(long deadlineNanos) {
        if (Pipeline.stopped(streams)) throw new ServiceException("the rollup stage stopped (" + streams.state() + ")");
        if (System.nanoTime() > deadlineNanos) throw new ServiceException("the rollup stage did not finish within --timeout");
    }

    @Override
    public void close() {
        streams.close(CloseOptions.timeout(Duration.ofSeconds(30))
                .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
    }
}
