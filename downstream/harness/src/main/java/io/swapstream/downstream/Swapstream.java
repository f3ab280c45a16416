package io.swapstream.downstream;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Swapstream as a reader of the topics finds it: the command line's jar (cli/target/swapstream.jar) run as
 * processes, a broker ({@code swapstream broker}), Apicurio Registry (cli/target/apicurio-registry, which the cli
 * module's build unpacks) and the pipeline ({@code swapstream run}). Nothing of Swapstream's class path meets
 * Flink's or Spark's.
 */
public final class Swapstream implements AutoCloseable {
    private static final Pattern BROKER = Pattern.compile("running on (127\\.0\\.0\\.1:\\d+)");
    private static final Pattern REGISTRY = Pattern.compile("Listening on: (http://127\\.0\\.0\\.1:\\d+)");

    /** What a finished command printed. */
    public record Result(int exit, String out, String err) {}

    private final List<Process> processes = new ArrayList<>();
    private final Path jar;
    private final Path dir;
    private String bootstrap;
    private String registry;

    /** The checkout's root. */
    public static Path root() {
        return Path.of(System.getProperty("swapstream.root", "../..")).toAbsolutePath().normalize();
    }

    /** Skips the calling test, saying why, unless asked for and built. */
    public static Swapstream start(Path dir) throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("swapstream.downstream"), "the Flink and Spark readers run with -Dswapstream.downstream=true");
        Path jar = root().resolve("cli/target/swapstream.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar), "no " + jar + ": build the cli module in the same run (-pl downstream/flink -am)");
        Path registryJar = registryJar();
        Assumptions.assumeTrue(registryJar != null, "no Apicurio Registry in cli/target/apicurio-registry: the cli module's build unpacks it"
                + " unless -Dregistry.skip");
        Swapstream s = new Swapstream(jar, dir);
        try {
            s.bootstrap = s.startAndWait("broker", List.of(java(), "-Xmx512m", "-jar", jar.toString(), "broker", "--port", "0",
                    "--data-dir", dir.resolve("broker").toString()), BROKER, dir);
            s.registry = s.startAndWait("registry", List.of(java(), "-Xmx256m", "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=0",
                    "-jar", registryJar.toString()), REGISTRY, registryJar.getParent());
        } catch (Exception e) {
            s.close();
            throw e;
        }
        return s;
    }

    private Swapstream(Path jar, Path dir) {
        this.jar = jar;
        this.dir = dir;
    }

    private static Path registryJar() throws IOException {
        Path d = root().resolve("cli/target/apicurio-registry");
        if (!Files.isDirectory(d)) return null;
        try (var files = Files.list(d)) {
            return files.filter(f -> f.getFileName().toString().endsWith("-runner.jar")).findFirst().orElse(null);
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Starts a process and waits (a bound, not a timing) for the line saying where it listens. */
    private String startAndWait(String name, List<String> command, Pattern listening, Path workDir) throws Exception {
        Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        processes.add(p);
        CompletableFuture<String> where = new CompletableFuture<>();
        StringBuilder log = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (log) {
                        if (log.length() < 20_000) log.append(line).append('\n');
                    }
                    Matcher m = listening.matcher(line);
                    if (m.find()) where.complete(m.group(1));
                }
            } catch (IOException e) {
                // the process ended
            }
            synchronized (log) {
                where.completeExceptionally(new IllegalStateException(name + " ended before it listened:\n" + log));
            }
        }, name + "-output");
        reader.setDaemon(true);
        reader.start();
        return where.get(180, TimeUnit.SECONDS);
    }

    /** The broker's bootstrap servers. */
    public String bootstrap() {
        return bootstrap;
    }

    /** The registry's root URL (Confluent's API is under /apis/ccompat/v7). */
    public String registry() {
        return registry;
    }

    /** Runs a command of the command line to its end (bounded by 10 minutes) and gives what it printed. */
    public Result run(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(java(), "-Xmx768m", "-jar", jar.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("swapstream " + String.join(" ", args) + " did not end within 10 minutes:\n" + Files.readString(err));
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** Runs a command and fails, with what it printed, unless it exits 0. */
    public Result ok(String... args) throws Exception {
        Result r = run(args);
        if (r.exit() != 0) throw new AssertionError("swapstream " + String.join(" ", args) + " exited " + r.exit() + ":\n" + r.err() + r.out());
        return r;
    }

    /** A GET of the registry's Confluent API, its body. */
    public String ccompat(String path) throws Exception {
        var client = java.net.http.HttpClient.newHttpClient();
        var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(registry + "/apis/ccompat/v7" + path)).GET().build();
        return client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }

    @Override
    public void close() throws Exception {
        for (Process p : processes) p.destroy();
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) p.destroyForcibly();
        }
    }
}
