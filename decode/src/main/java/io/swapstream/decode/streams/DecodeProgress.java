package io.swapstream.decode.streams;

import java.nio.ByteBuffer;

/**
 * What the decode stage has done for one session, committed with its outputs: how many buffers
 * it took and how many records of each kind it emitted, so a restarted instance replays the
 * stored buffers and emits only what was not yet emitted.
 */
record DecodeProgress(long buffers, long switches, long threads, long deadLetters, boolean sessionEmitted,
                      boolean done) {
    static final DecodeProgress NONE = new DecodeProgress(0, 0, 0, 0, false, false);

    byte[] encode() {
        return ByteBuffer.allocate(42).putLong(buffers).putLong(switches).putLong(threads).putLong(deadLetters)
                .put((byte) (sessionEmitted ? 1 : 0)).put((byte) (done ? 1 : 0)).array();
    }

    static DecodeProgress decode(byte[] b) {
        if (b == null) return NONE;
        ByteBuffer v = ByteBuffer.wrap(b);
        return new DecodeProgress(v.getLong(), v.getLong(), v.getLong(), v.getLong(), v.get() == 1, v.get() == 1);
    }
}
