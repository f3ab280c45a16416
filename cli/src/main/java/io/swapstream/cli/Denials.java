package io.swapstream.cli;

/** A command that says a right Kafka refused in one line: what it acts as, and for whom. */
interface Denials {
    Denied denied();
}
