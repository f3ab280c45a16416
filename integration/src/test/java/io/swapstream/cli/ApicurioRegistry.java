package io.swapstream.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A real Apicurio Registry (in-memory storage) for the whole test run, on loopback, started from the
 * artifact the build unpacks into {@code target/apicurio-registry}. Tests take it as an
 * {@link ApicurioRegistry.Url}; they skip, saying why, where the build could not fetch it.
 */
public final class ApicurioRegistry implements BeforeAllCallback, ParameterResolver {
    /** The registry's root URL; Confluent's API is under {@code /apis/ccompat/v7}. */
    public record Url(String root) {
        String ccompat(String path) {
            return root + "/apis/ccompat/v7" + path;
        }

        /** GET of Confluent's API, its body. */
        String get(String path) throws Exception {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(ccompat(path))).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.body();
        }

        /** A request with a JSON body to Confluent's API, its status. */
        int send(String method, String path, String json) throws Exception {
            HttpRequest q = HttpRequest.newBuilder(URI.create(ccompat(path))).header("Content-Type", "application/vnd.schemaregistry.v1+json")
                    .method(method, HttpRequest.BodyPublishers.ofString(json)).build();
            return HttpClient.newHttpClient().send(q, HttpResponse.BodyHandlers.ofString()).statusCode();
        }
    }

    private static final Pattern LISTENING = Pattern.compile("Listening on: (http://127\\.0\\.0\\.1:\\d+)");

    private static final class Running implements ExtensionContext.Store.CloseableResource {
        final Url url;
        final Process process;

        Running(Url url, Process process) {
            this.url = url;
            this.process = process;
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        running(context);
    }

    private static Running running(ExtensionContext context) {
        Path dir = Path.of(System.getProperty("swapstream.apicurio.dir", "target/apicurio-registry"));
        Path jar;
        try (var files = Files.list(dir)) {
            jar = files.filter(f -> f.getFileName().toString().endsWith("-runner.jar")).findFirst().orElse(null);
        } catch (java.io.IOException e) {
            jar = null;
        }
        Assumptions.assumeTrue(jar != null, "no Apicurio Registry in " + dir + ": the build unpacks io.apicurio:apicurio-registry-app:"
                + "2.6.13.Final (all, tar.gz) there unless -Dregistry.skip, as where it cannot be fetched");
        Path runner = jar;
        return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(Running.class, k -> start(runner), Running.class);
    }

    private static Running start(Path jar) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=0", "-jar", jar.toString()));
        try {
            Process p = new ProcessBuilder(command).directory(jar.getParent().toFile()).redirectErrorStream(true).start();
            CompletableFuture<String> url = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        Matcher m = LISTENING.matcher(line);
                        if (m.find()) url.complete(m.group(1));
                    }
                } catch (java.io.IOException e) {
                    // the process ended
                }
                url.completeExceptionally(new IllegalStateException("Apicurio Registry ended before it listened"));
            }, "apicurio-registry-output");
            reader.setDaemon(true);
            reader.start();
            return new Running(new Url(url.get(120, TimeUnit.SECONDS)), p);
        } catch (Exception e) {
            throw new IllegalStateException("Apicurio Registry did not start: " + e, e);
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == Url.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return running(e).url;
    }
}
