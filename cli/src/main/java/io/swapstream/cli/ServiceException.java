package io.swapstream.cli;

/** The work could not be done for a reason outside the input (Kafka unreachable, a stage stopped): one line, exit status 1. */
final class ServiceException extends RuntimeException {
    ServiceException(String message) {
        super(message, null, false, false);
    }

    ServiceException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
