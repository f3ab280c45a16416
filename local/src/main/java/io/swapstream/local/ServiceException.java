package io.swapstream.local;

/** The work could not be done for a reason outside the input (Kafka unreachable, a stage stopped): one line, exit status 1. */
public final class ServiceException extends RuntimeException {
    public ServiceException(String message) {
        super(message, null, false, false);
    }

    public ServiceException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
