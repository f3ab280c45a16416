package io.swapstream.cli;

import java.io.PrintWriter;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A long-lived command's short progress line on stderr until closed: looked at every {@value #EVERY_SECONDS} s,
 * printed when it changed, and at least every {@value #QUIET_LOOKS} looks (5 minutes) while it stays the same,
 * so an idle process says it is alive without filling its log with the same line.
 */
public final class ProgressLine implements AutoCloseable {
    static final long EVERY_SECONDS = 10;
    static final int QUIET_LOOKS = 30;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "swapstream-progress");
        t.setDaemon(true);
        return t;
    });
    private final Repeats repeats = new Repeats();

    public ProgressLine(PrintWriter err, String prefix, Supplier<String> line) {
        timer.scheduleAtFixedRate(() -> {
            try {
                String l = repeats.next(line.get());
                if (l == null) return;
                err.println(prefix + l);
                err.flush();
            } catch (RuntimeException e) {
                // a progress line is not worth stopping for
            }
        }, EVERY_SECONDS, EVERY_SECONDS, TimeUnit.SECONDS);
    }

    /** Which of a series of looks are printed: a changed line, or the same one after {@link #QUIET_LOOKS} looks. */
    static final class Repeats {
        private String last;
        private int unprinted;

        /** The line to print, or null when it is the one printed last and was printed lately. */
        String next(String line) {
            if (Objects.equals(line, last) && ++unprinted < QUIET_LOOKS) return null;
            last = line;
            unprinted = 0;
            return line;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
