package io.swapstream.stage;

import io.swapstream.schemas.RecoveryBudget;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SerializationException;

/**
 * Which stream-thread failures a stage survives by replacing the thread: Kafka's own errors (a
 * broker restarted mid-transaction, a coordinator moved), from which Kafka Streams recovers the
 * tasks' state from their changelogs, exactly once; and not ours, nor credentials, nor bad records,
 * which a new thread would meet again. Bounded, so that a failure that keeps coming stops the stage.
 */
public final class ThreadReplacementPolicy {
    public static final int MAX_REPLACEMENTS = 5;
    public static final long WINDOW_MS = 10 * 60_000L;

    private final RecoveryBudget budget = new RecoveryBudget(MAX_REPLACEMENTS, WINDOW_MS);

    /** Whether to replace the thread that failed with {@code e} at {@code nowMs}. */
    public boolean replace(Throwable e, long nowMs) {
        return transientKafkaError(e) && budget.spend(nowMs);
    }

    static boolean transientKafkaError(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        if (!(root instanceof KafkaException)) return false;
        return !(root instanceof AuthenticationException || root instanceof AuthorizationException
                || root instanceof SerializationException);
    }
}
