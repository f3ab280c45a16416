package io.swapstream.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** CPU by thread of the run's processes, from /proc: where the cores went. */
final class ThreadCpu {
    private ThreadCpu() {}

    /** Per thread (process: name), the share of a core each used over {@code ms}, busiest first, from /proc. */
    static String busiestThreads(Map<String, Long> pids, long ms) throws Exception {
        Map<String, Long> before = threadTicks(pids);
        Thread.sleep(ms);
        Map<String, Long> after = threadTicks(pids);
        Map<String, Double> share = new HashMap<>();
        after.forEach((k, v) -> share.merge(k.substring(0, k.lastIndexOf('#')), (v - before.getOrDefault(k, 0L)) / (ms / 10.0), Double::sum));
        StringBuilder b = new StringBuilder();
        share.entrySet().stream().sorted((x, y) -> Double.compare(y.getValue(), x.getValue())).limit(14)
                .forEach(e -> b.append(String.format("  %5.1f%%  %s%n", 100 * e.getValue(), e.getKey())));
        return b.toString();
    }

    /** utime + stime (clock ticks, 100 a second) of every thread, keyed "process: thread name#tid". */
    private static Map<String, Long> threadTicks(Map<String, Long> pids) {
        Map<String, Long> out = new HashMap<>();
        pids.forEach((name, pid) -> {
            try (var tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
                tasks.forEach(t -> {
                    try {
                        String stat = Files.readString(t.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        String comm = Files.readString(t.resolve("comm")).strip().replaceAll("-?[0-9]+$", "");
                        out.put(name + ": " + comm + "#" + t.getFileName(), Long.parseLong(f[11]) + Long.parseLong(f[12]));
                    } catch (IOException | RuntimeException e) {
                        // the thread ended
                    }
                });
            } catch (IOException e) {
                // the process ended
            }
        });
        return out;
    }
}
