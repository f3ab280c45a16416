package io.swapstream.decode.merge;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.util.HashMap;
import java.util.Map;

/**
 * The live processes and threads named by the trace's Process and Thread events, for labelling.
 * Ended ones are dropped (their last info has been emitted), so it holds only what lives.
 */
public final class ThreadDirectory {
    private final String session;
    private final Map<Integer, String> processNames = new HashMap<>();
    private final Map<Integer, ThreadLabel> threads = new HashMap<>();
    /** Each live thread's process, for {@link #processOf} once per ReadyThread event: no boxing there. */
    private final it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap processes = newProcesses();

    private static it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap newProcesses() {
        it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap m = new it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap();
        m.defaultReturnValue(SwitchBatch.NONE);
        return m;
    }

    public ThreadDirectory(String session) {
        this.session = session;
    }

    public void onProcess(ProcessEvent p) {
        if (p.hookId() == ProcessEvent.END) processNames.remove(p.processId());
        else if (!p.imageFileName().isEmpty()) processNames.put(p.processId(), p.imageFileName());
    }

    /** Records a thread event; returns the thread's updated info. */
    public ThreadLabel onThread(ThreadEvent t, long timeNanos) {
        ThreadLabel old = threads.get(t.threadId());
        boolean sameThread = old != null && old.processId() != null && old.processId() == t.processId() && old.endNanos() == null;
        ThreadLabel info;
        if (t.isName()) {
            info = new ThreadLabel(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    t.threadName().isEmpty() ? null : t.threadName(),
                    sameThread ? old.basePriority() : null, sameThread ? old.startNanos() : null, null);
        } else if (t.isEnd()) {
            info = new ThreadLabel(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    sameThread ? old.threadName() : null, t.basePriority() >= 0 ? t.basePriority() : null,
                    sameThread ? old.startNanos() : null, timeNanos);
        } else {
            info = new ThreadLabel(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    sameThread ? old.threadName() : null, t.basePriority() >= 0 ? t.basePriority() : null,
                    t.hookId() == ThreadEvent.START ? (Long) timeNanos : sameThread ? old.startNanos() : null, null);
        }
        if (t.isEnd()) threads.remove(t.threadId());
        else threads.put(t.threadId(), info);
        remember(info);
        return info;
    }

    private void remember(ThreadLabel info) {
        if (info.endNanos() != null || info.processId() == null) processes.remove(info.threadId());
        else processes.put(info.threadId(), (int) info.processId());
    }

    /** The process of a live thread, or {@link SwitchBatch#NONE} when no event named it. */
    public int processOf(int tid) {
        return processes.get(tid);
    }

    /** Live threads and processes known: what a checkpoint holds. */
    public int size() { return threads.size() + processNames.size(); }

    void write(StateWriter o) {
        o.writeInt(processNames.size());
        for (Map.Entry<Integer, String> e : processNames.entrySet()) {
            o.writeInt(e.getKey());
            o.string(e.getValue());
        }
        o.writeInt(threads.size());
        for (ThreadLabel t : threads.values()) {
            o.writeInt(t.threadId());
            o.nullableInt(t.processId());
            o.nullableString(t.processName());
            o.nullableString(t.threadName());
            o.nullableInt(t.basePriority());
            o.nullableLong(t.startNanos());
            o.nullableLong(t.endNanos());
        }
    }

    void read(StateReader in) {
        processNames.clear();
        threads.clear();
        processes.clear();
        for (int n = in.readInt(); n > 0; n--) processNames.put(in.readInt(), in.string());
        for (int n = in.readInt(); n > 0; n--) {
            int tid = in.readInt();
            ThreadLabel t = new ThreadLabel(session, tid, in.nullableInt(), in.nullableString(), in.nullableString(),
                    in.nullableInt(), in.nullableLong(), in.nullableLong());
            threads.put(tid, t);
            remember(t);
        }
    }
}
