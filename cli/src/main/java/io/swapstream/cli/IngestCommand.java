package io.swapstream.cli;

import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.Denied;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.ingest.AfterPublish;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.DirectoryIngest;
import io.swapstream.ingest.IngestMetrics;
import io.swapstream.ingest.SessionStatus;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.ingest.WatcherIds;
import io.swapstream.local.UserInputException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "ingest", description = "Publish the raw buffers of .etl files to Kafka, one record per buffer;"
        + " with --watch, follow a directory of growing traces until stopped.")
final class IngestCommand implements Callable<Integer>, Denials {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Parameters(arity = "0..*", paramLabel = "FILE.etl", description = "the traces to publish (or --watch)",
            showDefaultValue = picocli.CommandLine.Help.Visibility.NEVER)
    List<Path> files = new ArrayList<>();

    @Option(names = "--watch", paramLabel = "DIR", description = "follow every .etl file in DIR, new and growing, publishing each buffer once it is whole")
    Path watch;

    @Option(names = "--quiet", defaultValue = "30s", paramLabel = "DURATION", description = "with --watch: a file that has not grown for this long is finished")
    Duration quiet;

    @Option(names = "--poll", defaultValue = "250ms", paramLabel = "DURATION", description = "with --watch: how often the directory is"
            + " looked at (a listing and a size per file: cheap)")
    Duration poll;

    @Option(names = "--host", paramLabel = "HOST", description = "host the traces came from; default: each file's name without"
            + " extension, and with --watch this machine's name")
    String host;

    @Option(names = "--host-from-file-name", description = "with --watch: each file's host is its name without extension (a folder"
            + " that receives many hosts' files), not this machine's name")
    boolean hostFromFileName;

    @Option(names = "--after-publish", defaultValue = "keep", paramLabel = "keep|delete|move:DIR", description = "with --watch: what to"
            + " do with a file once its session has ended and its end is committed in Kafka (a restart in between neither loses"
            + " nor republishes it)")
    String afterPublish;

    @Option(names = "--flush-timer", paramLabel = "DURATION", description = "with --watch: the loggers' flush timer (their -ft), so the"
            + " decode stage's merge waits no longer than it for a quiet processor; a buffer that comes later anyway is counted"
            + " out of order. Default: none declared (a file-mode logger writes a buffer only when it is full)")
    Duration flushTimer;

    @Option(names = "--http", paramLabel = "HOST:PORT", description = "with --watch: serve /health and /metrics here (the backlog in"
            + " the folder, each host's newest file's age, the collection script's status; port 0 takes any free port). Default: none")
    String http;

    @Option(names = "--http-tls", paramLabel = "KEYSTORE", description = "with --http: serve HTTPS with this PKCS12 (or .jks) key store,"
            + " its password in $SWAPSTREAM_HTTP_TLS_PASSWORD, as the stages do")
    Path httpTls;

    @Option(names = "--http-users", paramLabel = "FILE", description = "with --http: ask for a user of this file (basic authentication)"
            + " on /metrics, as the stages do")
    Path httpUsers;

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "MaximumWaitReason the decode stage uses for these sessions; default: by each trace's OS build")
    String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        Integer mwr = Options.maxWaitReason(maxWaitReason);
        if (watch != null) return watch(mwr);
        if (http != null || httpTls != null || httpUsers != null) throw new UserInputException("--http goes with --watch DIR");
        if (files.isEmpty()) throw new UserInputException("give the traces to publish, or --watch DIR");
        Options.traceFiles(files);
        for (Path f : files) Options.host(host, f); // before Kafka is asked anything
        kafka.validate(true);
        String bootstrap = kafka.connect();
        try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
            TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication(admin), RoleAcls.suffixes(RoleAcls.Role.INGEST));
        }
        Outcome o = publish(spec, bootstrap, kafka.prefix, files, host, mwr, true, kafka.clientConfig());
        return o.status();
    }

    /** Follows the directory until the process is stopped. */
    private int watch(Integer mwr) throws Exception {
        if (!files.isEmpty()) throw new UserInputException("give the traces to publish or --watch DIR, not both");
        if (http != null) Options.hostPort("--http", http);
        else if (httpTls != null || httpUsers != null) throw new UserInputException("--http-tls and --http-users go with --http");
        if (Files.exists(watch) && !Files.isDirectory(watch)) throw new UserInputException("--watch: " + watch + " is not a directory");
        if (host != null && hostFromFileName) throw new UserInputException("give --host or --host-from-file-name, not both");
        AfterPublish after = AfterPublish.parse(afterPublish);
        Long flushTimerMs = flushTimer == null ? null : Math.max(1, flushTimer.toMillis());
        String watchHost = host != null ? Options.checkedHost(host, "--host") : hostFromFileName ? null : Options.machineName();
        long quietMs = quiet.toMillis();
        long pollMs = poll.toMillis();
        kafka.validate(true);
        PrintWriter err = spec.commandLine().getErr();
        if (!Files.exists(watch)) {
            // the folder the loggers or generate -o will write to: made here rather than refused, and said
            Files.createDirectories(watch);
            err.println("swapstream ingest: created " + watch + ", which did not exist");
            err.flush();
        }
        String bootstrap = kafka.connect();
        try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
            TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication(admin), RoleAcls.suffixes(RoleAcls.Role.INGEST));
        }
        Path dir = watch.toAbsolutePath().normalize();
        String txId = WatcherIds.transactionalId(kafka.prefix, watchHost, dir);
        DirectoryIngest.Settings settings = new DirectoryIngest.Settings(dir, watchHost, quietMs, kafka.prefix, bootstrap, txId, mwr,
                kafka.clientConfig(), after, flushTimerMs);
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.set(false);
            try {
                done.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try (DirectoryIngest ingest = new DirectoryIngest(settings, line -> {
                 err.println("swapstream ingest: " + line);
                 err.flush();
             });
             ProgressLine progress = new ProgressLine(err, "swapstream ingest: ", () -> String.format(
                     "%d buffers out, %d sessions open, %d ended, %d files followed, heap %d MiB after the last collection",
                     ingest.buffersOut.sum(), ingestOpen.get(), ingest.sessionsEnded.sum(), ingest.followed(), heapAfterCollectionMiB()))) {
            err.printf("swapstream ingest: watching %s as host %s (a file quiet for %s is finished; after publishing: %s), Kafka %s%n",
                    dir, watchHost != null ? watchHost : "(each file's name)", quiet, afterPublish, bootstrap);
            err.flush();
            if (http != null) {
                metrics = new IngestMetrics(dir, ingest::hostFor, watchHost, ingest.buffersOut::sum, ingestOpen::get,
                        ingest.sessionsEnded::sum, System::currentTimeMillis);
                server = serve(metrics, running);
                err.printf("swapstream ingest: /health and /metrics on %s://%s%n", server.scheme(), server.address());
                err.flush();
            }
            while (running.get()) {
                ingest.poll(System.currentTimeMillis());
                ingestOpen.set(ingest.open());
                Thread.sleep(pollMs);
            }
        } finally {
            if (server != null) server.close();
            if (metrics != null) metrics.close();
            done.countDown();
        }
        return 0;
    }

    @Override
    public Denied denied() {
        return denied(kafka.prefix, host, kafka.clientConfig());
    }

    static Denied denied(String prefix, String host, Map<String, Object> clientConfig) {
        return Denied.of(RoleAcls.Role.INGEST, clientConfig, new RoleAcls.Scope(prefix, null, host, null));
    }

    /** A file's error in one line: a refused right as such. */
    static String message(Exception e, Denied denied) {
        String line = denied.line(e);
        return line != null ? line : Swapstream.userMessage(e);
    }

    private IngestMetrics metrics;
    private io.swapstream.http.StageHttp server;

    /** /health (200 while the watcher runs) and /metrics, on the stages' own HTTP server. */
    private io.swapstream.http.StageHttp serve(IngestMetrics m, java.util.concurrent.atomic.AtomicBoolean running) throws Exception {
        io.swapstream.http.HttpTls tls = httpTls == null ? null : io.swapstream.http.HttpTls.load(httpTls);
        io.swapstream.http.HttpUsers users = httpUsers == null ? null : io.swapstream.http.HttpUsers.read(httpUsers);
        io.swapstream.http.StageHttp s;
        try {
            s = io.swapstream.http.StageHttp.bind(http, tls, users).describingErrors(Swapstream::userMessage);
        } catch (java.io.IOException e) {
            throw new UserInputException("--http " + http + ": cannot listen there (" + e.getMessage() + ")");
        }
        s.route("/health", request -> new io.swapstream.http.StageHttp.Response(running.get() ? 200 : 503, "application/json",
                ("{\"state\":\"" + (running.get() ? "RUNNING" : "STOPPING") + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8), null));
        s.route("/metrics", request -> new io.swapstream.http.StageHttp.Response(200,
                io.swapstream.http.StageMetrics.contentType(request.accept()), m.scrape(request.accept()), null));
        String exposure = s.exposure();
        if (exposure != null) spec.commandLine().getErr().println("swapstream ingest: warning: --http " + http + ": " + exposure);
        s.start();
        return s;
    }

    private final java.util.concurrent.atomic.AtomicLong ingestOpen = new java.util.concurrent.atomic.AtomicLong();

    /** The heap the last collection left in use: what a watcher running for months keeps, without the garbage since. */
    static long heapAfterCollectionMiB() {
        long used = 0;
        for (var pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            var after = pool.getCollectionUsage();
            if (pool.getType() == java.lang.management.MemoryType.HEAP && after != null) used += after.getUsed();
        }
        return used >> 20;
    }

    /** Files sent before one wait for Kafka's acknowledgement. */
    static final int FLUSH_FILES = 64;

    /** A file sent, not yet acknowledged. */
    private record Sent(Path file, BufferPublisher.Published published) {}

    /**
     * Waits for Kafka's acknowledgement of the files sent, then reports each (added to {@code out}) and empties
     * {@code group}; the exit status this comes to.
     */
    private static int acknowledge(BufferPublisher publisher, List<Sent> group, PrintWriter err, List<BufferPublisher.Published> out,
                                   Denied denied) {
        if (group.isEmpty()) return 0;
        int status = 0;
        try {
            publisher.flush(group.size() == 1 ? group.get(0).file().toString() : "one of " + group.size() + " files from " + group.get(0).file());
            for (Sent s : group) {
                BufferPublisher.Published p = s.published();
                if (p.error() != null) {
                    err.println("swapstream: " + p.error() + " (the rest went to the dead-letter topic; the session is marked incomplete)");
                    status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                } else if (p.cutShort() != null) {
                    err.println("swapstream: " + p.cutShort() + " (published as it is; the session is marked incomplete)");
                    status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                } else if (p.undecodable() != null) {
                    err.println("swapstream: " + p.undecodable() + " (published as it is: the decode stage sends what it cannot"
                            + " decode to the dead-letter topic and marks the session incomplete)");
                    status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                }
                err.printf("published %s: %d buffers, %.1f MiB as session %s%n", s.file(), p.buffers(), p.bytes() / 1048576.0, p.session());
                out.add(p);
            }
        } catch (Exception e) {
            err.println("swapstream: " + message(e, denied));
            status = Math.max(status, Swapstream.exitCode(e));
        }
        group.clear();
        return status;
    }

    /** What publishing some files came to: the sessions published and the exit status. */
    record Outcome(List<BufferPublisher.Published> published, int status) {}

    /**
     * Publishes every file; a file with an error is reported in one line and the others go on. A
     * file whose session has already ended is not published again ({@code checkEnded}).
     */
    static Outcome publish(CommandSpec spec, String bootstrap, String prefix, List<Path> files, String host,
                           Integer maxWaitReason, boolean checkEnded, Map<String, Object> clientConfig) throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<BufferPublisher.Published> out = new ArrayList<>();
        Denied denied = denied(prefix, host, clientConfig);
        int status = 0;
        try (BufferPublisher publisher = new BufferPublisher(bootstrap, prefix, clientConfig);
             SessionStatus sessions = checkEnded ? new SessionStatus(bootstrap, prefix, clientConfig) : null) {
            // sent a group at a time and acknowledged together: a round trip per file held many small files to a few dozen a second
            List<Sent> group = new ArrayList<>();
            for (Path f : files) {
                try {
                    String session = BufferPublisher.sessionOf(f, Options.host(host, f));
                    if (sessions != null && sessions.hasEnded(session)) {
                        err.println("swapstream: warning: session " + session + " (" + f + ") was published before and has"
                                + " ended; not publishing it again (a different --host makes it a new session)");
                        status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                    } else {
                        try (ProgressBar bar = System.console() == null ? null : new ProgressBarBuilder()
                                .setTaskName(f.getFileName().toString()).setInitialMax(Files.size(f))
                                .setStyle(ProgressBarStyle.ASCII).setUnit(" MiB", 1 << 20).build()) {
                            group.add(new Sent(f, publisher.send(f, Options.host(host, f), maxWaitReason, bar == null ? null : bar::stepTo)));
                        }
                    }
                } catch (Exception e) {
                    err.println("swapstream: " + message(e, denied));
                    status = Math.max(status, Swapstream.exitCode(e));
                }
                if (group.size() >= FLUSH_FILES) status = Math.max(status, acknowledge(publisher, group, err, out, denied));
            }
            status = Math.max(status, acknowledge(publisher, group, err, out, denied));
        }
        return new Outcome(out, status);
    }
}
