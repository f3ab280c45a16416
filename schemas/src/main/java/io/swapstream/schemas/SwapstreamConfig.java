package io.swapstream.schemas;

import org.apache.kafka.common.config.ConfigDef;
import java.util.Map;

/** Topic names and configuration keys, in one place (docs/architecture.md "Topics and records"). */
public final class SwapstreamConfig {
    private SwapstreamConfig() {}

    // configuration keys the stages read from their Kafka Streams configuration
    public static final String TOPIC_PREFIX = "swapstream.topic.prefix";
    public static final String SERDE_FACTORY = "swapstream.serde.factory";
    /**
     * A schema registry (Confluent's client property): records are written in Confluent's wire format, their
     * schemas registered under the topics' value subjects; without it, Avro single-object encoding.
     */
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    /** Decode: also write one ContextSwitch record per switch to {@link #CONTEXT_SWITCHES} (default false). */
    public static final String DECODE_ROWS = "swapstream.decode.rows";
    /** Decode: switches per ContextSwitchBatch record (default {@value #DEFAULT_BATCH_ROWS}). */
    public static final String DECODE_BATCH_ROWS = "swapstream.decode.batch.rows";
    public static final int DEFAULT_BATCH_ROWS = 4096;
    /**
     * Decode: buffers between two checkpoints of a session's decoder (default {@value #DEFAULT_CHECKPOINT_BUFFERS},
     * at most {@value #REDO_SLOTS}); the buffers since the last are noted, to be read back and decoded again
     * (sending nothing) after a restart. A checkpoint encodes what the merge holds (megabytes while it waits for a quiet processor), so fewer
     * cost less; more make a restart decode more again.
     */
    public static final String DECODE_CHECKPOINT_BUFFERS = "swapstream.decode.checkpoint.buffers";
    public static final int DEFAULT_CHECKPOINT_BUFFERS = 512;
    /**
     * Aggregate: batches between two writes of a session's accumulators at most (default {@value #DEFAULT_FLUSH_BATCHES}, at
     * most {@value #REDO_SLOTS}): what a restart takes again.
     */
    public static final String AGGREGATE_FLUSH_BATCHES = "swapstream.aggregate.flush.batches";
    public static final int DEFAULT_FLUSH_BATCHES = 1024;
    /**
     * Aggregate: trace time between two writes of a session's accumulators at most, ms (default {@value
     * #DEFAULT_FLUSH_TRACE_MS}); with windows, at the first window close this long after the last write. At a write,
     * whole-session accumulators leave memory: all of them where windows are this long or longer (a write at each close),
     * else those of threads that did not run since the write before. Memory follows the threads that run, however many a
     * long session starts.
     */
    public static final String AGGREGATE_FLUSH_TRACE_MS = "swapstream.aggregate.flush.trace.ms";
    public static final long DEFAULT_FLUSH_TRACE_MS = 60_000;
    /** Aggregate: closed windows the stats store keeps per thread for queries (default {@value #DEFAULT_KEEP_WINDOWS}); the topic has them all. */
    public static final String AGGREGATE_KEEP_WINDOWS = "swapstream.aggregate.keep.windows";
    public static final int DEFAULT_KEEP_WINDOWS = 60;
    /** Keys of a session's redo store: records since the last checkpoint or flush, numbered modulo this. */
    public static final int REDO_SLOTS = 1024;
    /** Rollup: a window's roll-up closes once no row for it has come for this long of wall-clock time (default {@value #DEFAULT_ROLLUP_GRACE_MS}). */
    public static final String ROLLUP_GRACE_MS = "swapstream.rollup.grace.ms";
    public static final long DEFAULT_ROLLUP_GRACE_MS = 120_000;
    /**
     * Rollup: once a host has moved past a window, the window waits at most this long (wall clock) for the other live
     * hosts to move past it too (default {@value #DEFAULT_ROLLUP_MAX_WAIT_MS}); a row that comes later goes into a revision.
     */
    public static final String ROLLUP_MAX_WAIT_MS = "swapstream.rollup.max.wait.ms";
    public static final long DEFAULT_ROLLUP_MAX_WAIT_MS = 120_000;
    /** Rollup: closed windows the query stores keep (default {@value #DEFAULT_ROLLUP_KEEP_WINDOWS}, an hour of minutes). */
    public static final String ROLLUP_KEEP_WINDOWS = "swapstream.rollup.keep.windows";
    public static final int DEFAULT_ROLLUP_KEEP_WINDOWS = 60;
    /**
     * Decode: how long a live session's merge waits for a processor's buffer before it lets later items
     * out (default 5 min: a file-mode logger writes a quiet processor's buffer minutes late); a switch that then comes is counted out of order. A finished file's merge
     * waits for its own lateness, sent with it ({@link #HEADER_LATENESS_TICKS}).
     */
    public static final String DECODE_MAX_LATENESS_MS = "swapstream.decode.max.lateness.ms";
    public static final long DEFAULT_DECODE_MAX_LATENESS_MS = 300_000L;
    /** Decode: bytes a session's merge may hold before its oldest items leave (default a quarter of the heap). */
    public static final String DECODE_MAX_QUEUE_BYTES = "swapstream.decode.max.queue.bytes";
    /** Decode: a session with no buffer for this long ends as incomplete (default 10 min). */
    public static final String SESSION_IDLE_TIMEOUT_MS = "swapstream.session.idle.timeout.ms";
    public static final long DEFAULT_SESSION_IDLE_TIMEOUT_MS = 600_000L;
    /**
     * Both stages: how long after its end a session stays in their stores (default 7 days, Kafka's
     * default log retention). Then the decode stage forgets it (a buffer of it after that starts it
     * again) and the aggregate's queries no longer have its rows; the topics keep them for the broker's
     * retention. A service takes sessions for ever: without this, their state would grow for ever.
     */
    public static final String SESSION_RETENTION_MS = "swapstream.session.retention.ms";
    public static final long DEFAULT_SESSION_RETENTION_MS = 7L * 24 * 3600 * 1000;

    /**
     * What every stage's settings define: {@link #SESSION_RETENTION_MS}. Each stage's settings add their own
     * ({@code DecodeSettings.CONFIG} and the others), read once into their record through Kafka's {@link AbstractConfig}.
     */
    public static ConfigDef stageConfig() {
        return new ConfigDef().define(SESSION_RETENTION_MS, ConfigDef.Type.LONG, DEFAULT_SESSION_RETENTION_MS, ConfigDef.Range.atLeast(1),
                ConfigDef.Importance.MEDIUM, "how long after its end a session stays in the stage's stores, ms");
    }

    /** Aggregate: tumbling window of the windowed statistics, nanoseconds (default 60 s; 0: whole-session only). */
    public static final String AGGREGATE_WINDOW_NANOS = "swapstream.aggregate.window.nanos";
    public static final long DEFAULT_AGGREGATE_WINDOW_NANOS = 60_000_000_000L;
    /**
     * Aggregate: how often changed whole-session rows go out while a session runs (default 10 s; with windows, to
     * the query store alone): a row per thread per interval is what a dashboard redraws, and on a busy host thousands of rows.
     */
    public static final String AGGREGATE_EMIT_INTERVAL_MS = "swapstream.aggregate.emit.interval.ms";
    public static final long DEFAULT_AGGREGATE_EMIT_INTERVAL_MS = 10_000;

    public static final String DEFAULT_PREFIX = "etw.";
    /** Raw buffers are up to 1 MiB and more; topics and clients allow this much. */
    public static final int MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

    // topic suffixes
    public static final String RAW_BUFFERS = "raw-buffers";
    public static final String SESSIONS = "sessions";
    public static final String SWITCH_BATCHES = "switch-batches";
    public static final String CONTEXT_SWITCHES = "context-switches";
    public static final String THREADS = "threads";
    public static final String THREAD_STATS = "thread-stats";
    public static final String DEAD_LETTERS = "dead-letters";
    /** The rollup stage's outputs: per process name and window, per host and window, across the fleet. */
    public static final String PROCESS_STATS = "process-stats";
    public static final String HOST_STATS = "host-stats";
    /** The aggregate stage's who-woke-whom records, per session and window (WakeEdge), keyed waker/woken/windowStart. */
    public static final String WAKE_EDGES = "wake-edges";
    /** Where `ingest --watch` keeps how far it has published each session (compacted, written in its transactions). */
    public static final String INGEST_POSITIONS = "ingest-positions";

    // record headers on raw buffers and dead letters
    public static final String HEADER_HOST = "host";
    public static final String HEADER_SOURCE_FILE = "source-file";
    /**
     * Which recording a raw buffer is of, beyond its session id: a hash of the logfile header's start fields
     * (LogfileHeader.stream). The decode stage keeps a session to the stream that began it and refuses another's.
     */
    public static final String HEADER_STREAM = "stream";
    public static final String HEADER_BUFFER_INDEX = "buffer-index";
    public static final String HEADER_BUFFER_OFFSET = "buffer-offset";
    /** On the record that ends a session: the number of buffers published before it. */
    public static final String HEADER_END_OF_SESSION = "end-of-session";
    /** Optional on a session's records: MaximumWaitReason to decode its compact batches with. */
    public static final String HEADER_MAX_WAIT_REASON = "max-wait-reason";
    /**
     * On a session's first buffer, from an ingester that read the whole file first: the largest
     * lateness of its buffers in session clock ticks (BufferLateness), so the decode stage's merge
     * waits for exactly that. Absent for a live (growing) file.
     */
    public static final String HEADER_LATENESS_TICKS = "lateness-ticks";
    /**
     * On a live session's first buffer: the logger's flush timer in milliseconds, as the ingester was told
     * ({@code ingest --flush-timer}): every processor's buffer is written at least this often, so the decode
     * stage's merge need not wait longer for a quiet one. A buffer that comes later than that is counted out of order.
     */
    public static final String HEADER_FLUSH_TIMER_MS = "flush-timer-ms";
    /** On the record that ends a session: records of it the ingester sent to the dead letters, and why. */
    public static final String HEADER_INGEST_DEAD_LETTERS = "ingest-dead-letters";
    public static final String HEADER_INGEST_ERROR = "ingest-error";
    public static final String HEADER_ERROR = "error";
    /**
     * On a switch batch: its number within its session, from 0, as the decode stage sent it. The
     * aggregate takes each number once, and finds the ones its committed input offset passed without
     * its committed state taking them in the topic.
     */
    public static final String HEADER_BATCH_SEQUENCE = "batch-sequence";
    /**
     * On the switch batches (and switch rows) a session that ended incomplete sends at its end: the Unix time, ns, from
     * which its times are not known, the earliest of its processors' last events ({@link Long#MIN_VALUE}: a processor
     * showed nothing, so no time is). A processor's buffers past it may be missing, so derived times and statistics from
     * then on may count switches that are not there; the aggregate marks the windows that end after it incomplete
     * (docs/architecture.md "Incomplete sessions").
     */
    public static final String HEADER_INCOMPLETE_FROM = "incomplete-from";
    public static final String HEADER_STAGE = "stage";

    /** The full name of a topic under the configured prefix. */
    public static String topic(Map<String, ?> config, String suffix) {
        Object p = config.get(TOPIC_PREFIX);
        return (p == null ? DEFAULT_PREFIX : p.toString()) + suffix;
    }

    public static String topic(String prefix, String suffix) {
        return (prefix == null ? DEFAULT_PREFIX : prefix) + suffix;
    }
}
