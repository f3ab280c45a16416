package io.swapstream.batch;


/** Malformed input: the serde turns it into a SerializationException. */
final class MalformedAvroException extends RuntimeException {
    MalformedAvroException(String message) {
        super(message, null, false, false);
    }
}
