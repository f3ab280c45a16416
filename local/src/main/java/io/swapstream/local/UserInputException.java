package io.swapstream.local;

/** A mistake the user can fix (an option value, a file): one line, exit status 2. */
public final class UserInputException extends RuntimeException {
    public UserInputException(String message) {
        super(message, null, false, false);
    }
}
