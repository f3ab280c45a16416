package io.swapstream.aggregate.rollup.streams;

import io.swapstream.schemas.state.StateFormat;

/** A window of the windows store: its end, whether its rows have gone out, and whether late rows wait for a revision. */
record WindowState(long end, boolean closed, boolean revisionDue) {
    static final StateFormat FORMAT = new StateFormat("rollup window", 3);

    byte[] encode() {
        return FORMAT.write(o -> o.writeLong(end).writeBoolean(closed).writeBoolean(revisionDue));
    }

    static WindowState decode(byte[] value) {
        return FORMAT.read(value, in -> new WindowState(in.readLong(), in.readBoolean(), in.readBoolean()));
    }
}
