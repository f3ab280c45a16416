package io.swapstream.cli;

import io.swapstream.ingest.BufferPublisher;
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

    @Parameters(arity = "1..*", paramLabel = "FILE.etl") List<Path> files;

    @Option(names = "--host", description = "host the traces came from; default: each file's name") String host;

    @Option(names = "--max-wait-reason", description = "MaximumWaitReason the decode stage uses for these sessions") String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrap()))) {
            TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication);
        }
        List<BufferPublisher.Published> done = publish(spec, kafka.bootstrap(), kafka.prefix, files, host,
                Options.maxWaitReason(maxWaitReason));
        boolean failed = done.size() < files.size() || done.stream().anyMatch(p -> p.error() != null);
        return failed ? Swapstream.EXIT_BAD_INPUT : 0;
    }

    /** Publishes every file; a file with an error is reported in one line and the others go on. */
    static List<BufferPublisher.Published> publish(CommandSpec spec, String bootstrap, String prefix, List<Path> files,
                                                   String host, Integer maxWaitReason) throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<BufferPublisher.Published> out = new ArrayList<>();
        try (BufferPublisher publisher = new BufferPublisher(bootstrap, prefix, Map.of())) {
            for (Path f : files) {
                BufferPublisher.Published p;
                try (ProgressBar bar = System.console() == null ? null : new ProgressBarBuilder()
                        .setTaskName(f.getFileName().toString()).setInitialMax(Files.size(f))
                        .setStyle(ProgressBarStyle.ASCII).setUnit(" MiB", 1 << 20).build()) {
                    p = publisher.publish(f, Options.host(host, f), maxWaitReason, bar == null ? null : bar::stepTo);
                } catch (Exception e) {
                    err.println("swapstream: " + Swapstream.userMessage(e));
                    continue;
                }
                if (p.error() != null) err.println("swapstream: " + p.error() + " (the rest went to the dead-letter topic)");
                err.printf("published %s: %d buffers, %.1f MiB as session %s%n", f, p.buffers(), p.bytes() / 1048576.0, p.session());
                out.add(p);
            }
        }
        return out;
    }
}
