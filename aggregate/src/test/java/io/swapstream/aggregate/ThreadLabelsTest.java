package io.swapstream.aggregate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.swapstream.batch.ThreadLabel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class ThreadLabelsTest {
    private static ThreadLabel label(int tid, int pid, String image, Long start) {
        return new ThreadLabel("s", tid, pid, image, null, null, start, null);
    }

    /** Counts what is asked of it: a session restored with thread 7 in process 70 and process 80's name. */
    private static final class Restored implements LabelStore {
        final List<ThreadLabel> put = new ArrayList<>();
        int gets;
        int scans;

        @Override
        public void put(ThreadLabel t) { put.add(t); }

        @Override
        public ThreadLabel get(int tid) {
            gets++;
            return tid == 7 ? label(7, 70, "seven.exe", 0L) : null;
        }

        @Override
        public void forEach(Consumer<ThreadLabel> each) {
            scans++;
            each.accept(label(7, 70, "seven.exe", 0L));
            each.accept(label(8, 80, "eight.exe", 0L));
        }
    }

    @Test
    void aThreadStartedLaterInTheBatchTakesItsNewProcessFromItsStartOn() {
        ThreadLabels labels = new ThreadLabels(LabelStore.NONE);
        labels.take(List.of(label(5, 50, "old.exe", 100L)), 100);
        labels.endOfBatch();
        // thread 5 exits; its TID is reused at 200 and again at 300 (the batch's start order is not assumed)
        labels.take(List.of(label(5, 52, "third.exe", 300L), label(5, 51, "second.exe", 200L)), 150);
        assertEquals(50, labels.processOf(5));
        labels.advanceTo(199);
        assertEquals(50, labels.processOf(5));
        labels.advanceTo(200);
        assertEquals(51, labels.processOf(5));
        labels.advanceTo(300);
        assertEquals(52, labels.processOf(5));
        // the rows' label is the batch's last record of the thread from the batch's arrival on
        assertEquals("second.exe", labels.label(5).processName());
    }

    @Test
    void aThreadNoRecordNamesIsInTheUnknownProcess() {
        ThreadLabels labels = new ThreadLabels(LabelStore.NONE);
        assertEquals(WakeEdges.UNKNOWN, labels.processOf(9));
        assertNull(labels.label(9));
        assertNull(labels.processName(90));
    }

    @Test
    void aRestoredSessionReadsEachMissFromItsStoreOnce() {
        Restored store = new Restored();
        ThreadLabels labels = new ThreadLabels(store);
        labels.take(List.of(label(9, 90, "nine.exe", 0L)), 10);
        labels.endOfBatch();
        assertEquals(List.of(label(9, 90, "nine.exe", 0L)), store.put);

        assertEquals(70, labels.processOf(7));
        assertEquals(70, labels.processOf(7));
        assertEquals(WakeEdges.UNKNOWN, labels.processOf(6));
        assertEquals(WakeEdges.UNKNOWN, labels.processOf(6));
        assertEquals(2, store.gets);
        assertEquals(90, labels.processOf(9));
        assertEquals(2, store.gets);

        assertEquals("seven.exe", labels.label(7).processName());
        assertEquals(2, store.gets);

        assertEquals("nine.exe", labels.processName(90));
        assertEquals(0, store.scans);
        assertEquals("eight.exe", labels.processName(80));
        assertNull(labels.processName(81));
        assertEquals(1, store.scans);
    }
}
