package io.swapstream.aggregate.streams;

import java.nio.ByteBuffer;

/** How far the aggregate stage is with one session, against what the decode stage says it emitted. */
final class AggregateProgress {
    long switches;
    long threads;
    long expectedSwitches = -1;
    long expectedThreads = -1;
    boolean done;

    boolean complete() {
        return !done && expectedSwitches >= 0 && switches >= expectedSwitches && threads >= expectedThreads;
    }

    static final WriteBackStore.Codec<AggregateProgress> CODEC = new WriteBackStore.Codec<>() {
        @Override
        public byte[] encode(AggregateProgress p) {
            return ByteBuffer.allocate(33).putLong(p.switches).putLong(p.threads).putLong(p.expectedSwitches)
                    .putLong(p.expectedThreads).put((byte) (p.done ? 1 : 0)).array();
        }

        @Override
        public AggregateProgress decode(byte[] bytes) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            AggregateProgress p = new AggregateProgress();
            p.switches = b.getLong();
            p.threads = b.getLong();
            p.expectedSwitches = b.getLong();
            p.expectedThreads = b.getLong();
            p.done = b.get() == 1;
            return p;
        }

        @Override
        public AggregateProgress empty() { return new AggregateProgress(); }
    };
}
