package io.swapstream.cli;

import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.SessionStatus;
import io.swapstream.ingest.TopicSetup;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
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
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "ingest", description = "Publish the raw buffers of .etl files to Kafka, one record per buffer.")
final class IngestCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Parameters(arity = "1..*", paramLabel = "FILE.etl", description = "the traces to publish") List<Path> files;

    @Option(names = "--host", paramLabel = "HOST", description = "host the traces came from; default: each file's name without extension") String host;

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "MaximumWaitReason the decode stage uses for these sessions; default: by each trace's OS build")
    String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        Integer mwr = Options.maxWaitReason(maxWaitReason);
        Options.traceFiles(files);
        kafka.validate(true);
        String bootstrap = kafka.connect();
        try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
            TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication);
        }
        Outcome o = publish(spec, bootstrap, kafka.prefix, files, host, mwr, true);
        return o.status();
    }

    /** What publishing some files came to: the sessions published and the exit status. */
    record Outcome(List<BufferPublisher.Published> published, int status) {}

    /**
     * Publishes every file; a file with an error is reported in one line and the others go on. A
     * file whose session has already ended is not published again ({@code checkEnded}).
     */
    static Outcome publish(CommandSpec spec, String bootstrap, String prefix, List<Path> files, String host,
                           Integer maxWaitReason, boolean checkEnded) throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<BufferPublisher.Published> out = new ArrayList<>();
        int status = 0;
        try (BufferPublisher publisher = new BufferPublisher(bootstrap, prefix, Map.of());
             SessionStatus sessions = checkEnded ? new SessionStatus(bootstrap, prefix, Map.of()) : null) {
            for (Path f : files) {
                BufferPublisher.Published p;
                try {
                    String session = BufferPublisher.sessionOf(f, Options.host(host, f));
                    if (sessions != null && sessions.hasEnded(session)) {
                        err.println("swapstream: warning: session " + session + " (" + f + ") was published before and has"
                                + " ended; not publishing it again (a different --host makes it a new session)");
                        status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                        continue;
                    }
                    try (ProgressBar bar = System.console() == null ? null : new ProgressBarBuilder()
                            .setTaskName(f.getFileName().toString()).setInitialMax(Files.size(f))
                            .setStyle(ProgressBarStyle.ASCII).setUnit(" MiB", 1 << 20).build()) {
                        p = publisher.publish(f, Options.host(host, f), maxWaitReason, bar == null ? null : bar::stepTo);
                    }
                } catch (Exception e) {
                    err.println("swapstream: " + Swapstream.userMessage(e));
                    status = Math.max(status, Swapstream.exitCode(e));
                    continue;
                }
                if (p.error() != null) {
                    err.println("swapstream: " + p.error() + " (the rest went to the dead-letter topic; the session is marked incomplete)");
                    status = Math.max(status, Swapstream.EXIT_BAD_INPUT);
                }
                err.printf("published %s: %d buffers, %.1f MiB as session %s%n", f, p.buffers(), p.bytes() / 1048576.0, p.session());
                out.add(p);
            }
        }
        return new Outcome(out, status);
    }
}
