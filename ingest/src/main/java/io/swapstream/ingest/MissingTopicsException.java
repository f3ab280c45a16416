package io.swapstream.ingest;

import java.util.List;
import org.apache.kafka.common.errors.AuthorizationException;

/**
 * Topics a client needs do not exist, and the broker refused to create them: an administrator creates
 * them once, with their settings, for every client that may not.
 */
public final class MissingTopicsException extends RuntimeException {
    private final List<String> topics;

    MissingTopicsException(List<String> topics, AuthorizationException refused) {
        super("topic" + (topics.size() == 1 ? " " : "s ") + String.join(", ", topics) + (topics.size() == 1 ? " does" : " do")
                + " not exist, and Kafka refused to create " + (topics.size() == 1 ? "it" : "them") + " (" + refused.getMessage() + ")",
                refused, false, false);
        this.topics = List.copyOf(topics);
    }

    public List<String> topics() { return topics; }
}
