package io.swapstream.schemas.serde;

/** A schema registry that cannot be reached or refuses a request: one line saying which and why. */
public final class SchemaRegistryException extends RuntimeException {
    public SchemaRegistryException(String message) {
        super(message);
    }
}
