package io.swapstream.schemas;

import java.util.Map;

/** Topic names and configuration keys, in one place (DESIGN.md "Topics"). */
public final class SwapstreamConfig {
    private SwapstreamConfig() {}

    // configuration keys the stages read from their Kafka Streams configuration
    public static final String TOPIC_PREFIX = "swapstream.topic.prefix";
    public static final String SERDE_FACTORY = "swapstream.serde.factory";

    public static final String DEFAULT_PREFIX = "etw.";
    /** Raw buffers are up to 1 MiB and more; topics and clients allow this much. */
    public static final int MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

    // topic suffixes
    public static final String RAW_BUFFERS = "raw-buffers";
    public static final String SESSIONS = "sessions";
    public static final String CONTEXT_SWITCHES = "context-switches";
    public static final String THREADS = "threads";
    public static final String THREAD_STATS = "thread-stats";
    public static final String DEAD_LETTERS = "dead-letters";

    // record headers on raw buffers and dead letters
    public static final String HEADER_HOST = "host";
    public static final String HEADER_SOURCE_FILE = "source-file";
    public static final String HEADER_BUFFER_INDEX = "buffer-index";
    public static final String HEADER_BUFFER_OFFSET = "buffer-offset";
    /** On the record that ends a session: the number of buffers published before it. */
    public static final String HEADER_END_OF_SESSION = "end-of-session";
    /** Optional on a session's records: MaximumWaitReason to decode its compact batches with. */
    public static final String HEADER_MAX_WAIT_REASON = "max-wait-reason";
    /** On the record that ends a session: records of it the ingester sent to the dead letters, and why. */
    public static final String HEADER_INGEST_DEAD_LETTERS = "ingest-dead-letters";
    public static final String HEADER_INGEST_ERROR = "ingest-error";
    public static final String HEADER_ERROR = "error";
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
