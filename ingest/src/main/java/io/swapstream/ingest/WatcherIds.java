package io.swapstream.ingest;

import java.nio.file.Path;

/** The transactional ids of the watchers ({@code ingest --watch}), and what their ACLs name. */
public final class WatcherIds {
    private WatcherIds() {}

    /** Every watcher's transactional id begins with this and the topic prefix. */
    public static final String TRANSACTIONAL_ID_BASE = "swapstream-ingest-";

    /**
     * What the transactional ids of watchers publishing as {@code host} begin with (null: a watcher whose files name
     * their hosts): a host's name ends with ':', which no host name holds, so one host's ACL covers its ids alone.
     */
    public static String transactionalIdPrefix(String prefix, String host) {
        return TRANSACTIONAL_ID_BASE + prefix + (host == null ? "" : host + ":");
    }

    /** One watcher per directory, topic prefix and host: a restarted one fences the old and goes on from its positions. */
    public static String transactionalId(String prefix, String host, Path dir) {
        return transactionalIdPrefix(prefix, host) + Integer.toHexString(dir.toString().hashCode());
    }

    /** Fencings a watcher survives in 10 minutes: one fenced again and again has a twin, and stops. */
    public static final int MAX_FENCINGS = WatchTransactions.MAX_FENCINGS;
}
