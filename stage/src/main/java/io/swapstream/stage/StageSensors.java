package io.swapstream.stage;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MeasurableStat;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Value;
import org.apache.kafka.streams.StreamsMetrics;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * A stage's own metrics for one task, as Kafka Streams sensors in group {@value #GROUP}, tagged with
 * the stage, the stream thread and the task: they show per task beside Kafka Streams' own, and a
 * stage's total is their sum. A task that closes keeps its counters (a task that comes back to the same
 * thread finds them), so an instance's sums never go down; it sets its gauges to 0.
 */
public final class StageSensors {
    public static final String GROUP = "swapstream-stage-metrics";
    public static final String STAGE_TAG = "stage";
    public static final String REASON_TAG = "reason";

    // the metrics' names: counters get "-total"; /metrics shows them as swapstream_NAME (dashes as underscores), summed per stage
    public static final String RECORDS_IN = "records-in";
    public static final String BUFFERS_IN = "buffers-in";
    public static final String SWITCHES_IN = "switches-in";
    public static final String SWITCHES_OUT = "switches-out";
    public static final String SWITCHES_OUT_OF_ORDER = "switches-out-of-order";
    public static final String STATS_OUT = "stats-out";
    public static final String INCOMPLETE_STATS_OUT = "incomplete-stats-out";
    public static final String WAKE_EDGES_OUT = "wake-edges-out";
    public static final String WINDOWS_CLOSED = "windows-closed";
    public static final String DUPLICATE_BATCHES = "duplicate-batches";
    public static final String DEAD_LETTERS = "dead-letters";
    public static final String SESSIONS_ENDED = "sessions-ended";
    public static final String SESSIONS_FORGOTTEN = "sessions-forgotten";
    public static final String BUFFERS_LOST = "buffers-lost";
    public static final String EVENTS_LOST = "events-lost";
    /** Rollup: thread-window rows taken, rows that came after their window closed, roll-up rows out. */
    public static final String ROWS_IN = "rows-in";
    public static final String ROLLUP_LATE_ROWS = "rollup-late-rows";
    public static final String ROLLUPS_OUT = "rollups-out";
    public static final String ROLLUP_REVISIONS_OUT = "rollup-revisions-out";
    /** Gauges: summed over tasks. */
    public static final String SESSIONS_OPEN = "sessions-open";
    public static final String MERGE_QUEUED_ITEMS = "merge-queued-items";
    public static final String ACCUMULATORS_IN_MEMORY = "accumulators-in-memory";
    /** Gauges: the largest over tasks. */
    public static final String DECODE_CHECKPOINT_BYTES = "decode-checkpoint-bytes";
    public static final String EVENT_LAG_NANOS = "event-lag-nanos";
    /** Why decode sends a record to the dead letters, and {@code at-ingest} for the records the ingester sent there. */
    public static final java.util.List<String> DEAD_LETTER_REASONS = java.util.List.of("malformed-buffer", "missing-buffers", "no-logfile-header",
            "no-session-key", "after-session-end", "at-ingest", "other-stream");

    /** What each metric counts or shows, for /metrics' HELP lines. */
    public static final Map<String, String> DESCRIPTIONS = Map.ofEntries(
            Map.entry(RECORDS_IN, "records taken from the raw buffers topic"),
            Map.entry(BUFFERS_IN, "raw trace buffers decoded"),
            Map.entry(SWITCHES_OUT, "context switches sent on"),
            Map.entry(SWITCHES_OUT_OF_ORDER, "switches a live session's merge emitted after later ones (its"
                    + " maximum lateness or memory cap let those out first): no derived times"),
            Map.entry(SESSIONS_ENDED, "sessions ended"),
            Map.entry(SESSIONS_FORGOTTEN, "ended sessions that left the stores, their retention passed"),
            Map.entry(BUFFERS_LOST, "buffers of ended sessions that were not decoded"),
            Map.entry(EVENTS_LOST, "events the loggers reported lost"),
            Map.entry(SESSIONS_OPEN, "sessions with state in this task, not ended"),
            Map.entry(MERGE_QUEUED_ITEMS, "items the open sessions' time-ordered merges hold, waiting for what their processors may"
                    + " still write"),
            Map.entry(ACCUMULATORS_IN_MEMORY, "thread accumulators (whole-session and open window's) the open sessions hold in memory,"
                    + " as of the last emission interval: the aggregate's heap follows it"),
            Map.entry(DECODE_CHECKPOINT_BYTES, "the largest last decoder checkpoint of a session open in memory"),
            Map.entry(EVENT_LAG_NANOS, "the newest event time read minus the newest sent on, ns: decode, the most a session's merge holds"
                    + " back; aggregate, the newest switch taken minus the end of the newest window closed"),
            Map.entry(SWITCHES_IN, "context switches taken"),
            Map.entry(STATS_OUT, "ThreadStats rows emitted"),
            Map.entry(INCOMPLETE_STATS_OUT, "ThreadStats rows emitted with complete false (a session that ended incomplete: windows"
                    + " past the time it is known until, and its whole-session rows): kept out of the roll-ups"),
            Map.entry(WAKE_EDGES_OUT, "WakeEdge records emitted: a session's closed window's waker and woken process pairs"),
            Map.entry(WINDOWS_CLOSED, "windows emitted final"),
            Map.entry(DUPLICATE_BATCHES, "batches skipped: the session had taken their batch number"),
            Map.entry(DEAD_LETTERS, "records sent to the dead letters, by reason"),
            Map.entry(ROWS_IN, "final thread-window rows taken"),
            Map.entry(ROLLUP_LATE_ROWS, "thread-window rows that came after their window's roll-up went out: merged into a revision"),
            Map.entry(ROLLUPS_OUT, "final roll-up rows emitted, revisions included"),
            Map.entry(ROLLUP_REVISIONS_OUT, "roll-up rows emitted again with a higher revision, late rows merged"));

    private final StreamsMetrics metrics;
    private final Map<String, String> tags;
    private final String sensorPrefix;
    private final Map<String, Sensor> gauges = new HashMap<>();
    private final Map<String, Sensor> byReason = new HashMap<>();

    public StageSensors(ProcessorContext<?, ?> context, String stage) {
        this.metrics = context.metrics();
        String thread = Thread.currentThread().getName();
        this.tags = Map.of(STAGE_TAG, stage, "thread-id", thread, "task-id", context.taskId().toString());
        // sensor names are global to the instance's registry: one set per stage, thread and task
        this.sensorPrefix = "swapstream." + stage + "." + thread + "." + context.taskId() + ".";
    }

    /** A counter: the metric {@code name-total}, the sum of what is recorded. */
    public Sensor counter(String name) {
        return sensor(name, name + "-total", DESCRIPTIONS.get(name), tags, new CumulativeSum());
    }

    /** A gauge: the metric {@code name}, the last value recorded. */
    public Sensor gauge(String name) {
        Sensor s = sensor(name, name, DESCRIPTIONS.get(name), tags, new Value());
        gauges.put(name, s);
        return s;
    }

    /** Counts {@code n} of {@code name-total} with tag {@value #REASON_TAG} (a short fixed word). */
    public void countByReason(String name, String reason, long n) {
        byReason(name, reason).record(n);
    }

    /** Makes the counter of {@code name-total} with tag {@value #REASON_TAG} now, at 0: so that it shows before the first. */
    public void registerReason(String name, String reason) {
        byReason(name, reason);
    }

    private Sensor byReason(String name, String reason) {
        return byReason.computeIfAbsent(name + "/" + reason, k -> {
            Map<String, String> t = new HashMap<>(tags);
            t.put(REASON_TAG, reason);
            return sensor(name + "." + reason, name + "-total", DESCRIPTIONS.get(name), t, new CumulativeSum());
        });
    }

    /** The task is closing here: its gauges read 0 (its counters stay, for the instance's sums). */
    public void close() {
        gauges.values().forEach(s -> s.record(0));
    }

    private Sensor sensor(String sensorName, String metric, String description, Map<String, String> tags, MeasurableStat stat) {
        Sensor s = metrics.addSensor(sensorPrefix + sensorName, Sensor.RecordingLevel.INFO);
        s.add(new MetricName(metric, GROUP, description, tags), stat); // no-op when a reopened task finds it there
        return s;
    }
}
