package io.swapstream.schemas.state;

/**
 * One format of state-store values (and of the ingester's positions): a value starts with its format's
 * version. A release reads what the release before it wrote (docs/architecture.md, "Releases and stored
 * state"): a format gains fields after all of the previous release's, which that release reads past, and
 * keeps its version; a value of a version this build does not know is refused with one line naming the
 * format, the versions and what to do.
 */
public record StateFormat(String name, int version) {
    public StateFormat {
        if (version < 1 || version > 255) throw new IllegalArgumentException("a state format version is one byte, not " + version);
    }

    /** Writes a value's body. */
    @FunctionalInterface
    public interface Body {
        void write(StateWriter out);
    }

    /** Reads a value's body. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(StateReader in);
    }

    /** A value: the version, then what {@code body} writes. */
    public byte[] write(Body body) {
        StateWriter out = new StateWriter(64);
        writeTo(out, body);
        return out.toByteArray();
    }

    /** Writes the version, then the body, into {@code out} (reused by callers that write many values). */
    public void writeTo(StateWriter out, Body body) {
        out.writeByte(version);
        body.write(out);
    }

    /** Reads a value this format wrote. */
    public <T> T read(byte[] value, Reader<T> body) {
        return read(new StateReader(value, 0, value.length), body);
    }

    public <T> T read(StateReader in, Reader<T> body) {
        int v = in.readUnsignedByte();
        if (v != version) throw new IncompatibleStateException(this, v);
        return body.read(in);
    }

    /** A value written in another version of its format. */
    public static final class IncompatibleStateException extends IllegalStateException {
        IncompatibleStateException(StateFormat format, int found) {
            super(format.name() + " state is version " + found + ", and this build reads version " + format.version()
                    + " only, as releases from 0.1.0 on write it: version " + found + " is of a release this build does not know."
                    + " Run that release until the open sessions end, or reset the stage's application"
                    + " (kafka-streams-application-reset) and publish its input again (docs/upgrading.md)");
        }
    }
}
