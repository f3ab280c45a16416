package io.swapstream.cli;

import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "export", description = "A session back out of etw.raw-buffers (committed records) as the .etl file that was"
        + " ingested, byte for byte; a live session as far as it has been published.")
final class ExportCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--session", paramLabel = "ID", description = "the session id (host:logger:start time), as the pages and"
            + " `tail sessions` show it")
    String session;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "the .etl file to write (replaced if it exists)")
    Path output;

    @Option(names = "--from-beginning", description = "read the session's partition from its start, not from the session's"
            + " start time less an hour: for an ingester whose clock was more than an hour behind the trace host's")
    boolean fromBeginning;

    @Override
    public Integer call() throws Exception {
        if (session == null) throw new UserInputException("--session ID is required");
        if (output == null) throw new UserInputException("--session needs -o FILE");
        try {
            RawSessionReader.startMillis(session);
        } catch (IllegalArgumentException e) {
            throw new UserInputException("--session: " + e.getMessage());
        }
        Options.outputFile("-o", output);
        kafka.validate(true);
        // the folder is tried before Kafka is asked: a file that cannot be written is said at once
        Path part = partFile(output);
        try {
            String bootstrap = kafka.connect();
            RawSessionReader.Outcome o;
            try (RawSessionReader reader = new RawSessionReader(bootstrap, kafka.prefix, kafka.clientConfig());
                 OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(part), 1 << 16)) {
                o = reader.read(session, fromBeginning, b -> out.write(b.bytes()));
            } catch (RawSessionReader.Unavailable e) {
                throw new UserInputException(e.getMessage());
            }
            Files.move(part, output, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            PrintWriter out = spec.commandLine().getOut();
            out.println(output + ": session " + session + ", " + o.buffers() + " buffers, " + o.bytes() + " bytes"
                    + (o.ended() ? "" : "; live: as far as published now")
                    + (o.incomplete() == null ? "" : "; the ingester ended it incomplete (" + o.incomplete()
                    + "): the file's rest is on the dead-letter topic"));
            out.flush();
            return 0;
        } finally {
            Files.deleteIfExists(part);
        }
    }

    /**
     * A new file beside {@code target}, where it is written before it is renamed to it: a failed export leaves no
     * half file, and a folder that cannot be written fails here.
     */
    static Path partFile(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        return Files.createTempFile(dir, "." + target.getFileName(), ".part");
    }
}
