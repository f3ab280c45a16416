package io.swapstream.cli;

/** A mistake the user can fix (an option value, a file): one line, exit status 2. */
final class UserInputException extends RuntimeException {
    UserInputException(String message) {
        super(message, null, false, false);
    }
}
