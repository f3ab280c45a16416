package io.swapstream.schemas.state;

/**
 * One format of state-store values (and of the ingester's positions), and the one version rule they all
 * follow: a value starts with its format's version, and a build reads only the version it writes. State is
 * rebuilt from the topics, never carried across a change of its format: a value of another version is
 * refused with one line naming the format, both versions and what to do. (Records on the topics are the
 * other way round: every earlier schema stays readable, as the topic contract says.)
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
                    + " only: let the open sessions end before changing the build, or reset the stage's application"
                    + " (kafka-streams-application-reset) and publish its input again");
        }
    }
}
