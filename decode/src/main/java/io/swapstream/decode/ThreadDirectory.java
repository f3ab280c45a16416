package io.swapstream.decode;

import java.util.HashMap;
import java.util.Map;

/**
 * Processes and threads named by the trace's Process and Thread events, for labelling statistics.
 * A reused TID keeps the latest thread's facts.
 */
public final class ThreadDirectory {
    private final String session;
    private final Map<Integer, String> processNames = new HashMap<>();
    private final Map<Integer, ThreadInfo> threads = new HashMap<>();

    public ThreadDirectory(String session) {
        this.session = session;
    }

    public void onProcess(ProcessEvent p) {
        if (!p.imageFileName().isEmpty()) processNames.put(p.processId(), p.imageFileName());
    }

    /** Records a thread event; returns the thread's updated info. */
    public ThreadInfo onThread(ThreadEvent t, long timeNanos) {
        ThreadInfo old = threads.get(t.threadId());
        boolean sameThread = old != null && old.processId() != null && old.processId() == t.processId() && old.endNanos() == null;
        ThreadInfo info;
        if (t.isName()) {
            info = new ThreadInfo(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    t.threadName().isEmpty() ? null : t.threadName(),
                    sameThread ? old.basePriority() : null, sameThread ? old.startNanos() : null, null);
        } else if (t.isEnd()) {
            info = new ThreadInfo(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    sameThread ? old.threadName() : null, t.basePriority() >= 0 ? t.basePriority() : null,
                    sameThread ? old.startNanos() : null, timeNanos);
        } else {
            info = new ThreadInfo(session, t.threadId(), t.processId(), processNames.get(t.processId()),
                    sameThread ? old.threadName() : null, t.basePriority() >= 0 ? t.basePriority() : null,
                    t.hookId() == ThreadEvent.START ? (Long) timeNanos : sameThread ? old.startNanos() : null, null);
        }
        threads.put(t.threadId(), info);
        return info;
    }

    public ThreadInfo thread(int tid) {
        ThreadInfo t = threads.get(tid);
        if (t != null && t.processName() == null && t.processId() != null && processNames.containsKey(t.processId())) {
            t = new ThreadInfo(t.session(), t.threadId(), t.processId(), processNames.get(t.processId()), t.threadName(),
                    t.basePriority(), t.startNanos(), t.endNanos());
        }
        return t;
    }

}
