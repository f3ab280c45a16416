package io.swapstream.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "broker", description = "A standalone single-node Kafka (KRaft) broker on 127.0.0.1 for local use, until stopped;"
        + " its data survives a restart on the same --data-dir.")
final class BrokerCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--data-dir", defaultValue = "swapstream-broker", paramLabel = "DIR", description = "where the broker keeps its data and configuration")
    Path dataDir;

    @Option(names = "--port", defaultValue = "9092", paramLabel = "PORT", description = "client port on 127.0.0.1 (0: any free one)")
    int port;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) throw new UserInputException("--port must be between 0 and 65535, not " + port);
        if (Files.exists(dataDir) && !Files.isDirectory(dataDir)) throw new UserInputException("--data-dir: " + dataDir + " is not a directory");
        PrintWriter err = spec.commandLine().getErr();
        EmbeddedKafkaBroker broker;
        try {
            broker = EmbeddedKafkaBroker.start(dataDir.toAbsolutePath(), port, false);
        } catch (RuntimeException e) {
            throw new ServiceException("the broker did not start (is port " + port + " in use?): " + Swapstream.userMessage(e), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }));
        err.printf("swapstream broker: running on %s, data in %s (stop with Ctrl-C)%n", broker.bootstrapServers(), broker.dataDir());
        err.flush();
        try (ProgressLine progress = new ProgressLine(err, "swapstream broker: ", () -> String.format("%s, %.1f MiB of data",
                broker.bootstrapServers(), size(broker.dataDir()) / 1048576.0))) {
            stopped.await();
        }
        return 0;
    }

    private static long size(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        } catch (Exception e) {
            return 0;
        }
    }
}
