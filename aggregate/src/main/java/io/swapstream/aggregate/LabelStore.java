package io.swapstream.aggregate;

import io.swapstream.batch.ThreadLabel;
import java.util.function.Consumer;

/**
 * Where a session's thread records are kept beyond {@link ThreadLabels}' memory: nowhere offline; the labels
 * store in the aggregate stage, where a session opened after a restart finds its earlier records.
 */
public interface LabelStore {
    /** Offline: memory has every record. */
    LabelStore NONE = new LabelStore() {
        @Override
        public void put(ThreadLabel t) { }

        @Override
        public ThreadLabel get(int tid) { return null; }

        @Override
        public void forEach(Consumer<ThreadLabel> each) { }
    };

    /** A thread record a batch carried, now its thread's label. */
    void put(ThreadLabel t);

    /** The label of {@code tid} put before this session was opened here; null when none. */
    ThreadLabel get(int tid);

    /** Every label put before this session was opened here. */
    void forEach(Consumer<ThreadLabel> each);
}
