package io.swapstream.cli;

import java.io.PrintWriter;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** A long-lived command's short progress line, printed every few seconds on stderr until closed. */
final class ProgressLine implements AutoCloseable {
    static final long EVERY_SECONDS = 10;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "swapstream-progress");
        t.setDaemon(true);
        return t;
    });

    ProgressLine(PrintWriter err, String prefix, Supplier<String> line) {
        timer.scheduleAtFixedRate(() -> {
            try {
                err.println(prefix + line.get());
                err.flush();
            } catch (RuntimeException e) {
                // a progress line is not worth stopping for
            }
        }, EVERY_SECONDS, EVERY_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
