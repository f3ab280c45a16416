package io.swapstream.bench;

import io.swapstream.http.StageHttp;
import io.swapstream.http.StatsApi;
import io.swapstream.local.Pipeline;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code bench --queries}: the aggregate's query API over the pipeline's aggregate, asked by 1 and by
 * 32 clients at once, each request timed. Clients keep their connections (Java's HttpClient), unlike
 * ApacheBench without keep-alive (bench/scripts/query-load.sh).
 */
public final class QueryLoad {
    /** What {@code clients} clients saw: requests, their time in all, and the median and 99th percentile of one. */
    public record Figures(String path, int clients, int requests, int failed, double seconds, double p50Ms, double p99Ms) {
        public double perSecond() {
            return requests / seconds;
        }
    }

    private QueryLoad() {}

    public static List<Figures> measure(Pipeline pipeline, String path) throws Exception {
        List<Figures> out = new ArrayList<>();
        try (StageHttp server = StageHttp.bind("127.0.0.1:0")) {
            StatsApi api = new StatsApi(pipeline.aggregate, pipeline.indexes, "127.0.0.1:" + server.port());
            server.route("/api/", api::answer);
            server.start();
            URI uri = URI.create("http://127.0.0.1:" + server.port() + path);
            ask(uri, 1, 200); // warm
            out.add(ask(uri, 1, 2000));
            out.add(ask(uri, 32, 20_000));
        }
        return out;
    }

    static Figures ask(URI uri, int clients, int requests) throws Exception {
        long[] nanos = new long[requests];
        int each = requests / clients;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Integer>> failed = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int c = 0; c < clients; c++) {
                int first = c * each;
                failed.add(pool.submit(() -> {
                    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                    HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
                    int bad = 0;
                    for (int i = first; i < first + each; i++) {
                        long s = System.nanoTime();
                        if (http.send(request, HttpResponse.BodyHandlers.ofByteArray()).statusCode() != 200) bad++;
                        nanos[i] = System.nanoTime() - s;
                    }
                    return bad;
                }));
            }
            int bad = 0;
            for (Future<Integer> f : failed) bad += f.get();
            double seconds = (System.nanoTime() - t0) / 1e9;
            long[] done = Arrays.copyOf(nanos, each * clients);
            Arrays.sort(done);
            return new Figures(uri.getRawPath() + "?" + uri.getRawQuery(), clients, done.length, bad, seconds,
                    done[done.length / 2] / 1e6, done[(int) Math.min(done.length - 1, Math.ceil(done.length * 0.99) - 1)] / 1e6);
        } finally {
            pool.shutdownNow();
        }
    }
}
