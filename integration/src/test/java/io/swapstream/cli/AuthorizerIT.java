package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.local.BrokerSecurity;
import io.swapstream.local.EmbeddedKafkaBroker;
import io.swapstream.local.OfflineRows;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ThreadStats;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker that enforces ACLs (SASL/SCRAM, StandardAuthorizer, nothing allowed without an ACL): an admin creates the
 * topics and each role's ACLs; two hosts' ingesters, decode, aggregate and rollup run as their own principals with
 * their role's rights alone, and the final rows equal the offline ones, each once. A host's credential revoked stops
 * that host alone. A right missing is one line naming who, what and where.
 */
class AuthorizerIT {
    static final long WINDOW = 60_000_000_000L;
    static final SingleObjectAvroSerde<ThreadStats> STATS = new SingleObjectAvroSerde<>(ThreadStats.class);
    static final List<String> USERS = List.of("admin", "host-a", "host-b", "decode", "aggregate", "rollup", "reader", "notx", "export",
            "archive");

    static BrokerSecurity security;
    static EmbeddedKafkaBroker broker;

    @TempDir Path dir;

    @BeforeAll
    static void start() throws Exception {
        Map<String, String> users = new LinkedHashMap<>();
        for (String u : USERS) users.put(u, u + "-secret");
        // a revoked credential's connections end at their next authentication: soon, in a test
        security = new BrokerSecurity("admin", users, 2_000);
        broker = EmbeddedKafkaBroker.startSecured(security);
    }

    @AfterAll
    static void stop() {
        if (broker != null) broker.close();
    }

    /** A --client-config file for {@code user}, with the short timeouts of the other process tests. */
    Path client(String user) throws Exception {
        List<String> lines = new ArrayList<>(List.of("session.timeout.ms=6000", "heartbeat.interval.ms=1500", "transaction.timeout.ms=10000",
                "commit.interval.ms=300"));
        security.clientConfig(user).forEach((k, v) -> lines.add(k + "=" + v));
        // a revoked host's commit times out sooner than a service's would
        if (user.startsWith("host-")) lines.add("max.block.ms=15000");
        lines.add("");
        return Files.writeString(dir.resolve(user + ".properties"), String.join("\n", lines));
    }

    String[] kafka(String user, String prefix, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of(more));
        a.addAll(List.of("-b", broker.bootstrapServers(), "--topic-prefix", prefix, "--partitions", "2", "--client-config",
                client(user).toString(), "--connect-timeout", "60s"));
        return a.toArray(String[]::new);
    }

    /** An admin grants {@code user} the rights of {@code role}. */
    void grant(String user, String role, String prefix, String app, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of("acls", "--role", role, "--principal", "User:" + user, "--application-id", app, "--apply"));
        a.addAll(List.of(more));
        CliRunner r = CliRunner.run(kafka("admin", prefix, a.toArray(String[]::new)));
        assertEquals(0, r.exit(), r.err());
    }

    Map<String, Object> adminClient() {
        Map<String, Object> c = new HashMap<>(security.clientConfig("admin"));
        c.put("bootstrap.servers", broker.bootstrapServers());
        return c;
    }

    /** A small trace of {@code host}, generated beside the watched folders. */
    Path trace(String name, long seed) throws Exception {
        Path f = Files.createDirectories(dir.resolve("made")).resolve(name + ".etl");
        GeneratorOptions o = GeneratorOptions.defaults().withShape(2, 2, 2).withSwitches(40_000).withBufferSize(8 * 1024).withSeed(seed)
                .withStartTime(134_000_000_000_000_000L + seed * 10_000_000_000L); // a session of its own: 1000 s apart
        TraceGenerator.generate(f, o, MaximumWaitReason.forBuild(o.build()));
        return f;
    }

    /** Puts a whole trace into a watched folder at once, as a finished file. */
    static void drop(Path trace, Path folder) throws Exception {
        Path tmp = folder.resolveSibling(trace.getFileName() + ".part");
        Files.copy(trace, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, folder.resolve(trace.getFileName()), StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void eachComponentRunsWithItsOwnRightsAndARevokedHostStopsAlone() throws Exception {
        String prefix = "acl" + UUID.randomUUID().toString().substring(0, 6) + ".";
        String app = "acl-" + prefix;
        CliRunner topics = CliRunner.run(kafka("admin", prefix, "topics", "--create"));
        assertEquals(0, topics.exit(), topics.err());
        grant("host-a", "ingest", prefix, app, "--host", "host-a");
        grant("host-b", "ingest", prefix, app, "--host", "host-b");
        for (String stage : List.of("decode", "aggregate", "rollup")) grant(stage, stage, prefix, app);
        Path a = Files.createDirectories(dir.resolve("a")), b = Files.createDirectories(dir.resolve("b"));
        Path a1 = trace("a1", 1), b1 = trace("b1", 2), a2 = trace("a2", 3);
        Map<String, ThreadStats> expected = new HashMap<>();
        for (Path f : List.of(a1, a2)) expected.putAll(OfflineRows.of(f, "host-a", WINDOW));
        expected.putAll(OfflineRows.of(b1, "host-b", WINDOW));
        Path state = dir.resolve("state");
        try (StageProcess decode = stage("decode", prefix, app, state);
             StageProcess aggregate = stage("aggregate", prefix, app, state, "--window", "60s", "--emit-interval", "1s");
             StageProcess rollup = stage("rollup", prefix, app, state, "--grace", "1s", "--max-wait", "1s");
             StageProcess ingestA = ingest("host-a", prefix, a);
             StageProcess ingestB = ingest("host-b", prefix, b);
             FinalRows rows = new FinalRows(prefix)) {
            drop(a1, a);
            drop(b1, b);
            rows.await(expected, List.of(a1, b1), Duration.ofSeconds(180), this::logs);
            // the rollup, with its rights alone, rolls them up
            awaitRecord(prefix + SwapstreamConfig.PROCESS_STATS, Duration.ofSeconds(120));

            try (Admin admin = Admin.create(adminClient())) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("host-b", ScramMechanism.SCRAM_SHA_512))).all().get();
            }
            // host b's next publish, once its connection authenticates again, is refused; host a goes on
            for (int i = 0; ingestB.alive() && i < 10; i++) {
                drop(trace("b-after-" + i, 100 + i), b);
                awaitLogOrExit(ingestB, "b-after-" + i + ".etl: no growth for", Duration.ofSeconds(120));
            }
            ingestB.awaitExit(Duration.ofSeconds(60));
            String bLog = Files.readString(dir.resolve("ingest-host-b.log"));
            assertTrue(bLog.contains("swapstream: denied: Kafka refused the credential of User:host-b"), bLog);
            assertTrue(bLog.lines().noneMatch(l -> l.startsWith("\tat ")), "no stack trace:\n" + bLog);
            assertEquals(Swapstream.EXIT_FAILURE, ingestB.exitValue());
            drop(a2, a);
            rows.await(expected, List.of(a1, b1, a2), Duration.ofSeconds(180), this::logs);
            rows.assertSame(expected, List.of(a1, b1, a2));
            assertTrue(ingestA.alive() && decode.alive() && aggregate.alive() && rollup.alive(), logs());
            System.out.println("AuthorizerIT: host-b revoked: " + bLog.lines().filter(l -> l.contains("denied")).findFirst().orElse(""));
        }
    }

    @Test
    void aMissingRightIsOneLineNamingWhoWhatAndWhere() throws Exception {
        String prefix = "den" + UUID.randomUUID().toString().substring(0, 6) + ".";
        String app = "den-" + prefix;
        // a stage that may not create topics, before an admin has: one line naming the command that creates them
        grant("decode", "decode", prefix, app);
        CliRunner missing = CliRunner.run(kafka("decode", prefix, "decode", "--application-id", app, "--http", "127.0.0.1:0",
                "--state-dir", dir.resolve("missing").toString()));
        assertEquals(Swapstream.EXIT_FAILURE, missing.exit(), missing.err());
        assertOneLine(missing, "swapstream: topics " + prefix + "raw-buffers, ");
        assertTrue(missing.err().contains("an admin creates them once with swapstream topics --create --topic-prefix " + prefix), missing.err());
        report("stage without create rights facing a missing topic", missing);

        CliRunner topics = CliRunner.run(kafka("admin", prefix, "topics", "--create"));
        assertEquals(0, topics.exit(), topics.err());
        grant("host-a", "ingest", prefix, app, "--host", "host-a");
        grant("reader", "reader", prefix, app);

        CliRunner notAdmin = CliRunner.run(kafka("reader", prefix, "topics", "--create"));
        assertEquals(Swapstream.EXIT_FAILURE, notAdmin.exit(), notAdmin.err());
        assertOneLine(notAdmin, "swapstream: denied: User:reader may not CREATE topic " + prefix);
        report("a reader creating the topics", notAdmin);

        CliRunner tail = CliRunner.run(kafka("host-a", prefix, "tail", "thread-stats"));
        assertEquals(Swapstream.EXIT_FAILURE, tail.exit(), tail.err());
        assertOneLine(tail, "swapstream: denied: User:host-a may not READ topic " + prefix + "thread-stats;");
        report("the ingest principal reading thread-stats", tail);

        Path trace = trace("r1", 5);
        CliRunner write = CliRunner.run(kafka("reader", prefix, "ingest", trace.toString(), "--host", "r1"));
        assertEquals(Swapstream.EXIT_FAILURE, write.exit(), write.err());
        assertOneLine(write, "swapstream: denied: User:reader may not ");
        assertTrue(write.err().contains("WRITE topic " + prefix + "raw-buffers"), write.err());
        report("a reader writing", write);

        // with its rights, the same commands run: an idempotent producer needs no IDEMPOTENT_WRITE on the cluster (KIP-679)
        CliRunner published = CliRunner.run(kafka("host-a", prefix, "ingest", trace.toString(), "--host", "host-a"));
        assertEquals(0, published.exit(), published.err());
        CliRunner read = CliRunner.run(kafka("reader", prefix, "tail", "sessions", "--from-beginning"));
        assertEquals(0, read.exit(), read.err());

        // export and archive with their roles' rights alone; a reader may not read the raw buffers
        String session = BufferPublisher.sessionOf(trace, "host-a");
        grant("export", "export", prefix, app);
        grant("archive", "archive", prefix, app);
        CliRunner noRaw = CliRunner.run(kafka("reader", prefix, "export", "--session", session, "-o", dir.resolve("no.etl").toString()));
        assertEquals(Swapstream.EXIT_FAILURE, noRaw.exit(), noRaw.err());
        assertOneLine(noRaw, "swapstream: denied: User:reader may not READ topic " + prefix + "raw-buffers;");
        report("a reader exporting", noRaw);
        Path exported = dir.resolve("exported.etl");
        CliRunner export = CliRunner.run(kafka("export", prefix, "export", "--session", session, "-o", exported.toString()));
        assertEquals(0, export.exit(), export.err());
        assertEquals(-1, Files.mismatch(trace, exported));
        Path archive = dir.resolve("archive");
        try (StageProcess p = StageProcess.start(dir.resolve("archive.log"), kafka("archive", prefix, "archive", "--to", archive.toString()))) {
            p.awaitLog("archived " + session, Duration.ofSeconds(120)); // in its default group
        }
        assertEquals(-1, Files.mismatch(trace, archive.resolve("host-a").resolve(session.substring(session.lastIndexOf(':') + 1) + ".etl")));

        // decode's rights but its transactional ids
        String notx = "notx-" + prefix;
        try (Admin admin = Admin.create(adminClient())) {
            List<AclBinding> rights = RoleAcls.bindings(RoleAcls.Role.DECODE, "User:notx", new RoleAcls.Scope(prefix, notx, null, null))
                    .stream().filter(x -> x.pattern().resourceType() != ResourceType.TRANSACTIONAL_ID).toList();
            admin.createAcls(rights).all().get();
        }
        CliRunner decode = CliRunner.run(kafka("notx", prefix, "decode", "--application-id", notx, "--http", "127.0.0.1:0",
                "--state-dir", dir.resolve("notx").toString()));
        assertEquals(Swapstream.EXIT_FAILURE, decode.exit(), decode.err());
        assertTrue(decode.err().contains("swapstream decode: stopping: denied: User:notx may not WRITE transactional id "
                + notx + "-decode-*"), decode.err());
        assertTrue(decode.err().lines().noneMatch(l -> l.startsWith("\tat ")), decode.err());
        report("decode without its transactional id", decode);
    }

    static void assertOneLine(CliRunner r, String line) {
        List<String> lines = r.err().lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith(line), r.err());
    }

    static void report(String what, CliRunner r) {
        System.out.println("AuthorizerIT: " + what + ": exit " + r.exit() + ": "
                + r.err().lines().filter(l -> l.contains("denied") || l.contains("does not exist") || l.contains("do not exist"))
                        .findFirst().orElse(r.err()));
    }

    StageProcess stage(String stage, String prefix, String app, Path state, String... more) throws Exception {
        List<String> a = new ArrayList<>(List.of(stage, "--http", "127.0.0.1:0", "--state-dir", state.toString(), "--application-id", app));
        a.addAll(List.of(more));
        return StageProcess.start(dir.resolve(stage + ".log"), kafka(stage, prefix, a.toArray(String[]::new)))
                .awaitLog(stage + ": running", Duration.ofSeconds(120));
    }

    StageProcess ingest(String host, String prefix, Path folder) throws Exception {
        return StageProcess.start(dir.resolve("ingest-" + host + ".log"), kafka(host, prefix, "ingest", "--watch", folder.toString(),
                "--host", host, "--quiet", "1s", "--poll", "200ms")).awaitLog("ingest: watching", Duration.ofSeconds(120));
    }

    /** Waits until the process logs {@code text} again or ends. */
    static void awaitLogOrExit(StageProcess p, String text, Duration timeout) throws Exception {
        try {
            p.awaitLog(text, timeout);
        } catch (AssertionError e) {
            if (p.alive()) throw e;
        }
    }

    void awaitRecord(String topic, Duration timeout) throws Exception {
        Map<String, Object> c = new HashMap<>(adminClient());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "check-" + UUID.randomUUID());
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (consumer.poll(Duration.ofMillis(200)).isEmpty()) {
                if (System.nanoTime() > deadline) throw new AssertionError("nothing on " + topic + " after " + timeout + "\n" + logs());
            }
        }
    }

    String logs() {
        StringBuilder s = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
                String t = Files.readString(p);
                s.append("--- ").append(p.getFileName()).append('\n').append(t.length() > 3000 ? t.substring(t.length() - 3000) : t);
            }
        } catch (Exception e) {
            s.append(e);
        }
        return s.toString();
    }

    /** thread-stats as they come, read as the admin: final rows by key and how often each came final. */
    final class FinalRows implements AutoCloseable {
        final Map<String, ThreadStats> finals = new ConcurrentHashMap<>();
        final Map<String, Integer> count = new ConcurrentHashMap<>();
        final AtomicInteger nonFinalWindows = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread reader;

        FinalRows(String prefix) {
            Map<String, Object> c = new HashMap<>(adminClient());
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, "rows-" + UUID.randomUUID());
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            reader = new Thread(() -> {
                try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(List.of(prefix + SwapstreamConfig.THREAD_STATS));
                    while (!stop.get()) {
                        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                            ThreadStats t = STATS.deserialize("t", r.value());
                            if (!t.getFinal$()) {
                                if (r.key().split("/").length == 3) nonFinalWindows.incrementAndGet();
                                continue;
                            }
                            finals.put(r.key(), t);
                            count.merge(r.key(), 1, Integer::sum);
                        }
                    }
                }
            });
            reader.start();
        }

        /** The expected rows of {@code traces}' sessions. */
        Map<String, ThreadStats> of(Map<String, ThreadStats> expected, List<Path> traces) throws Exception {
            List<String> sessions = new ArrayList<>();
            for (Path t : traces) sessions.add(BufferPublisher.sessionOf(t, hostOf(t)));
            Map<String, ThreadStats> m = new HashMap<>();
            expected.forEach((k, v) -> {
                if (sessions.stream().anyMatch(k::startsWith)) m.put(k, v);
            });
            assertTrue(!m.isEmpty());
            return m;
        }

        void await(Map<String, ThreadStats> expected, List<Path> traces, Duration timeout, java.util.function.Supplier<String> logs)
                throws Exception {
            Map<String, ThreadStats> due = of(expected, traces);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!finals.keySet().containsAll(due.keySet())) {
                if (System.nanoTime() > deadline) throw new AssertionError("final rows missing after " + timeout + "\n" + logs.get());
                Thread.sleep(200);
            }
        }

        void assertSame(Map<String, ThreadStats> expected, List<Path> traces) throws Exception {
            Map<String, ThreadStats> due = of(expected, traces);
            for (Map.Entry<String, ThreadStats> e : due.entrySet()) assertEquals(e.getValue(), finals.get(e.getKey()), e.getKey());
            List<String> sessions = new ArrayList<>();
            for (Path t : traces) sessions.add(BufferPublisher.sessionOf(t, hostOf(t)));
            for (String k : finals.keySet()) {
                if (sessions.stream().anyMatch(k::startsWith)) assertTrue(due.containsKey(k), "a row offline has not: " + k);
            }
            count.forEach((k, n) -> assertEquals(1, n, "final more than once: " + k));
            assertEquals(0, nonFinalWindows.get(), "a window is only ever emitted final");
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            reader.join();
        }
    }

    static String hostOf(Path trace) {
        return trace.getFileName().toString().startsWith("a") ? "host-a" : "host-b";
    }
}
