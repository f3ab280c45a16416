package io.swapstream.cli.kafka;

/** A command that says a right Kafka refused in one line: what it acts as, and for whom. */
public interface Denials {
    Denied denied();
}
