package io.swapstream.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code swapstream} command in its own JVM, as a user starts it in a terminal, with its output in
 * a log file: for tests that kill a stage with SIGKILL (kill -9) and start it again.
 */
final class StageProcess implements AutoCloseable {
    private final Process process;
    private final Path log;
    /** Where this run's output starts in the log (a restarted stage appends to the same log). */
    private final int from;

    private StageProcess(Process process, Path log, int from) {
        this.process = process;
        this.log = log;
        this.from = from;
    }

    /** Starts {@code swapstream args...}; its stdout and stderr go to {@code log} (appended). */
    static StageProcess start(Path log, String... args) throws IOException {
        return start(log, List.of(), args);
    }

    /** As {@link #start(Path, String...)}, with options for the JVM ({@code -Dname=value}, say). */
    static StageProcess start(Path log, List<String> jvm, String... args) throws IOException {
        return start(log, System.getProperty("java.class.path"), jvm, args);
    }

    /** {@code swapstream args...} of another build: {@code jar}, an earlier release's swapstream.jar, say. */
    static StageProcess startJar(Path jar, Path log, String... args) throws IOException {
        return start(log, jar.toString(), List.of(), args);
    }

    private static StageProcess start(Path log, String classPath, List<String> jvm, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx384m");
        cmd.addAll(jvm);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(Swapstream.class.getName());
        cmd.addAll(List.of(args));
        Files.writeString(log, "$ swapstream " + String.join(" ", args) + "\n", java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        int from = Files.readString(log).length();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        return new StageProcess(p, log, from);
    }

    /** Waits until the log holds {@code text} (after what it held at start), or fails with the log. */
    StageProcess awaitLog(String text, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String all = Files.readString(log);
            if (all.length() > from && all.substring(from).contains(text)) return this;
            if (!process.isAlive()) throw new AssertionError("the process ended (" + process.exitValue() + "):\n" + Files.readString(log));
            Thread.sleep(100);
        }
        throw new AssertionError("no '" + text + "' within " + timeout + ":\n" + Files.readString(log));
    }

    /** The first match of {@code regex}'s group 1 in this run's output: an address the process printed, say. */
    String logged(String regex) throws IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher(Files.readString(log).substring(from));
        if (!m.find()) throw new AssertionError("no " + regex + " in:\n" + Files.readString(log));
        return m.group(1);
    }

    /** The stage's HTTP address, as it printed it. */
    String http() throws IOException {
        return logged("HTTP on http://([0-9.:a-z]+)/");
    }

    /** SIGKILL: no shutdown hook, no clean close, mid-transaction. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    boolean alive() { return process.isAlive(); }

    /** Waits until the process ends by itself, or fails with the log. */
    void awaitExit(Duration timeout) throws Exception {
        if (!process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            throw new AssertionError("still running after " + timeout + ":\n" + Files.readString(log));
        }
    }

    int exitValue() { return process.exitValue(); }

    @Override
    public void close() throws InterruptedException {
        if (!process.isAlive()) return;
        process.destroy();
        if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) kill9();
    }
}
