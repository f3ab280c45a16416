package io.swapstream.decode.event;

/**
 * An event payload that does not fit its layout. Carries only the reason; whoever walks the
 * buffer knows the event's place and turns it into an {@code EtlFormatException}.
 */
public final class MalformedEventException extends RuntimeException {
    public MalformedEventException(String reason) {
        super(reason, null, false, false);
    }
}
