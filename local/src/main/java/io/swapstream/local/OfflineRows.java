package io.swapstream.local;

import io.swapstream.aggregate.SessionStatistics;
import io.swapstream.aggregate.ThreadStatsFields;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.schemas.avro.ThreadStats;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** A trace's final thread rows, whole-session and windowed, from the file alone, by the key the aggregate stage gives them. */
public final class OfflineRows {
    private OfflineRows() {}

    public static Map<String, ThreadStats> of(Path file, String host, long windowNanos) throws IOException {
        SessionStatistics whole = new SessionStatistics(0);
        SessionStatistics windows = new SessionStatistics(windowNanos);
        SessionDecoder d = SessionDecoder.decodeBatches(file, host, null, b -> {
            whole.accept(b);
            windows.accept(b);
        }, null);
        String session = d.session().session();
        Map<String, ThreadStats> out = new HashMap<>();
        for (ThreadStats t : whole.wholeSession()) out.put(ThreadStatsFields.key(session, t.getThreadId(), null), t);
        for (ThreadStats t : windows.windowed()) out.put(ThreadStatsFields.key(session, t.getThreadId(), t.getWindowStartNanos()), t);
        return out;
    }
}
