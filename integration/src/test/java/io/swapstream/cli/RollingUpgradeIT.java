package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.schemas.avro.ThreadStats;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rolling upgrade from release 0.1.0 to this build, mid-session, as processes on a real broker: two
 * instances of each stage and an ingester, all of 0.1.0, follow two growing traces (one session on
 * each partition); at gates in the files one process at a time is stopped with SIGTERM and this
 * build started in its place, on its state directory, instance id and topics. For a while an
 * instance of each release shares a stage's work, and once a task that this build wrote goes back
 * to a 0.1.0 instance. The final rows equal the offline statistics, each final once; every batch
 * and end record is on its topic once (read committed).
 *
 * <p>0.1.0's jar is {@code -Dswapstream.release.0.1.0.jar=PATH}, else built from its commit by
 * {@code scripts/release-jar.sh 0.1.0} (a clone without that commit skips, saying so).
 */
@ExtendWith(KafkaBroker.class)
class RollingUpgradeIT {
    @TempDir Path dir;

    /** A process of one release or the other, by the name the test gives it. */
    private final Map<String, StageProcess> running = new LinkedHashMap<>();
    private final Map<String, Double> takeOver = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private LiveSessionIT live;
    private KafkaBroker.Bootstrap k;
    private Path release010;

    @Test
    void twoInstancesOfEachStageReplacedOneAtATimeMidSession(KafkaBroker.Bootstrap k) throws Exception {
        this.k = k;
        release010 = release010Jar();
        live = new LiveSessionIT();
        live.dir = dir;
        Path whole = live.trace(200_000);
        String[] hosts = RebalanceIT.hostsOnBothPartitions(whole, "upgrade");
        Map<String, ThreadStats> expected = new HashMap<>();
        for (String host : hosts) expected.putAll(LiveSessionIT.offline(whole, host));
        Path watched = Files.createDirectories(dir.resolve("traces"));
        try {
            for (String name : List.of("decode-1", "decode-2", "aggregate-1", "aggregate-2", "rollup-1", "rollup-2")) start(name, true);
            start("ingest", true);
            double[] gates = {0.15, 0.3, 0.4, 0.55, 0.65, 0.75, 0.85};
            try (LiveSessionIT.Rows rows = live.new Rows(k);
                 GatedReplay a = GatedReplay.start(whole, watched.resolve(hosts[0] + ".etl"), 20, gates);
                 GatedReplay b = GatedReplay.start(whole, watched.resolve(hosts[1] + ".etl"), 20, gates)) {
                int g = 0;
                at(a, b, g);
                replace("decode-1");
                pass(a, b, g++);
                at(a, b, g);
                // a task this build wrote goes to the 0.1.0 instance, which reads it on
                running.remove("decode-1").close();
                pass(a, b, g++);
                at(a, b, g);
                start("decode-1", false);
                replace("decode-2");
                pass(a, b, g++);
                for (String name : List.of("aggregate-1", "aggregate-2")) {
                    at(a, b, g);
                    replace(name);
                    pass(a, b, g++);
                }
                at(a, b, g);
                replace("rollup-1");
                replace("rollup-2");
                pass(a, b, g++);
                at(a, b, g);
                replace("ingest");
                pass(a, b, g++);
                a.join();
                b.join();
                running.put("ingest", live.finish(k, watched, running.get("ingest"), watched.resolve(hosts[0] + ".etl"),
                        watched.resolve(hosts[1] + ".etl")));
                rows.await(expected, Duration.ofSeconds(240));
                LiveSessionIT.assertSameFinals(expected, rows);
            }
            for (String host : hosts) {
                String session = BufferPublisher.sessionOf(whole, host);
                ClusterFaultIT.assertEachBatchOnce(k.servers(), live.prefix, session);
                ClusterFaultIT.assertOneEndRecord(k.servers(), live.prefix, session);
            }
            takeOver.forEach((name, s) -> System.out.printf("RollingUpgradeIT: %s of this build answered /health 200 %.1f s after 0.1.0's"
                    + " was stopped%n", name, s));
        } finally {
            for (StageProcess p : running.values()) p.close();
        }
    }

    private static void at(GatedReplay a, GatedReplay b, int g) throws InterruptedException {
        a.awaitAt(g);
        b.awaitAt(g);
    }

    private static void pass(GatedReplay a, GatedReplay b, int g) {
        a.pass(g);
        b.pass(g);
    }

    /** Stops {@code name} (SIGTERM, as a service stop) and starts this build in its place; notes how long until it answers. */
    private void replace(String name) throws Exception {
        long t0 = System.nanoTime();
        running.remove(name).close();
        start(name, false);
        if (!name.equals("ingest")) takeOver.put(name, ClusterFaultIT.awaitHealth(http, running.get(name), t0));
    }

    private void start(String name, boolean ofRelease010) throws Exception {
        String stage = name.replaceAll("-[0-9]$", "");
        List<String> args = new ArrayList<>();
        if (stage.equals("ingest")) {
            args.addAll(List.of("ingest", "--watch", dir.resolve("traces").toString(), "--host-from-file-name", "--quiet",
                    LiveSessionIT.GATED_QUIET, "--poll", "200ms"));
        } else {
            args.addAll(List.of(stage, "--http", "127.0.0.1:0", "--state-dir", dir.resolve(name).toString(), "--application-id",
                    "live-" + live.prefix, "--instance-id", name));
            if (stage.equals("aggregate")) args.addAll(List.of("--window", "60s", "--emit-interval", "1s"));
            if (stage.equals("rollup")) args.addAll(List.of("--max-wait", "10s"));
        }
        String[] full = live.kafka(k, args.toArray(String[]::new));
        Path log = dir.resolve(name + ".log");
        StageProcess p = ofRelease010 ? StageProcess.startJar(release010, log, full) : StageProcess.start(log, full);
        running.put(name, p.awaitLog(stage.equals("ingest") ? "ingest: watching" : stage + ": running", Duration.ofSeconds(90)));
    }

    /** 0.1.0's swapstream.jar: given, or built from its commit. */
    static Path release010Jar() throws Exception {
        String given = System.getProperty("swapstream.release.0.1.0.jar");
        if (given != null && !given.isBlank()) return Path.of(given);
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        Process has = new ProcessBuilder("git", "-C", root.toString(), "cat-file", "-e", "f0fee48^{commit}").start();
        Assumptions.assumeTrue(has.waitFor() == 0, "release 0.1.0's commit f0fee48 is not in this clone, and"
                + " -Dswapstream.release.0.1.0.jar is not given: the rolling upgrade from 0.1.0 is not tried");
        Path out = Files.createTempFile("release-jar", ".out");
        Process build = new ProcessBuilder("bash", root.resolve("scripts/release-jar.sh").toString(), "0.1.0")
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!build.waitFor(15, java.util.concurrent.TimeUnit.MINUTES)) {
            build.destroyForcibly();
            throw new AssertionError("building 0.1.0's jar took over 15 minutes:\n" + Files.readString(out));
        }
        String printed = Files.readString(out);
        assertEquals(0, build.exitValue(), "scripts/release-jar.sh 0.1.0:\n" + printed);
        // the jar's path is the last thing it prints; Maven's terminal codes may stand before it on that line
        java.util.regex.Matcher jar = java.util.regex.Pattern.compile("(/[^\\s\\x1b]+\\.jar)\\s*$").matcher(printed);
        if (!jar.find()) throw new AssertionError("scripts/release-jar.sh 0.1.0 named no jar:\n" + printed);
        return Path.of(jar.group(1));
    }
}
