package io.swapstream.etw;

/**
 * Input that is not a well-formed ETL stream. The message is one line that names the source
 * and the byte offset, fit to print to a user as is.
 */
public final class EtlFormatException extends RuntimeException {
    private final String source;
    private final long offset;
    private final String reason;

    public EtlFormatException(String source, long offset, String reason) {
        super(source + ": byte offset " + offset + " (0x" + Long.toHexString(offset) + "): " + reason, null, false, false);
        this.source = source;
        this.offset = offset;
        this.reason = reason;
    }

    public String source() { return source; }
    public long offset() { return offset; }
    public String reason() { return reason; }
}
