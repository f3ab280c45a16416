package io.swapstream.aggregate.rollup.streams;

import io.swapstream.schemas.state.StateFormat;

/** A host's progress: the latest window start of its rows (stored), and when its last row came (wall clock, memory only). */
final class HostProgress {
    static final StateFormat FORMAT = new StateFormat("rollup host progress", 1);
    final long start;
    long lastRowMs;

    HostProgress(long start, long lastRowMs) {
        this.start = start;
        this.lastRowMs = lastRowMs;
    }

    byte[] encode() {
        return FORMAT.write(o -> o.writeLong(start));
    }

    static long startOf(byte[] value) {
        return FORMAT.read(value, in -> in.readLong());
    }
}
