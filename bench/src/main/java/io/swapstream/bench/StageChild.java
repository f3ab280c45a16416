package io.swapstream.bench;

import io.swapstream.local.ServiceException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A swapstream command in a JVM of its own, its output in a log. */
record StageChild(String name, Process process, Path log, int httpPort) implements AutoCloseable {
    static StageChild start(Path work, String name, int httpPort, String heap, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), heap));
        // -Dswapstream.fleet.jfr=DIR: a flight recording of each process, to see where time goes as N grows
        String jfr = System.getProperty("swapstream.fleet.jfr");
        if (jfr != null) cmd.add("-XX:StartFlightRecording=filename=" + Path.of(jfr, name + ".jfr") + ",settings=profile,dumponexit=true");
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), FleetBench.SWAPSTREAM_MAIN));
        cmd.addAll(List.of(args));
        Path log = work.resolve(name + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new StageChild(name, p, log, httpPort);
    }

    double cpuSecs() {
        return process.toHandle().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    long rssBytes() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", String.valueOf(process.pid()), "status"))) {
                if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
            }
        } catch (IOException e) {
            // gone
        }
        return -1;
    }

    /** Heap in use after a full GC (jcmd GC.run), from the stage's own metrics. */
    long heapAfterGc() throws Exception {
        new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), String.valueOf(process.pid()), "GC.run")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        return (long) sum(metrics(), "jvm_memory_used_bytes{area=\"heap\"");
    }

    /** The stage's /metrics text, scraped once: {@link #sum} reads as many metrics from it as wanted. */
    String metrics() throws Exception {
        return http("/metrics");
    }

    /** The sum of the samples whose line starts with {@code start}, in a /metrics text. */
    static double sum(String metrics, String start) {
        double sum = 0;
        for (String l : metrics.split("\n")) {
            if (l.startsWith(start)) sum += Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
        }
        return sum;
    }

    String http(String path) throws Exception {
        HttpRequest q = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).timeout(Duration.ofSeconds(30)).build();
        return HttpClient.newHttpClient().send(q, HttpResponse.BodyHandlers.ofString()).body();
    }

    void awaitLog(String text, long deadlineNanos) throws Exception {
        while (!Files.readString(log).contains(text)) {
            if (!process.isAlive()) throw new ServiceException(name + " ended: " + Files.readString(log).strip());
            if (System.nanoTime() > deadlineNanos) throw new ServiceException(name + " did not say '" + text + "' in time");
            Thread.sleep(100);
        }
    }

    @Override
    public void close() throws Exception {
        process.destroy(); // SIGTERM: the stage commits and leaves its group
        if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly();
    }
}
