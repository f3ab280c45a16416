package io.swapstream.cli;

import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.Denied;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.export.RangeExport;
import io.swapstream.ingest.RawSessionReader;
import io.swapstream.local.UserInputException;
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

@Command(name = "export", description = "Traces back out of etw.raw-buffers (committed records) as .etl files: --session, the file"
        + " that was ingested, byte for byte (a live session as far as published); --host with --from and --to, a file per session"
        + " of the host overlapping the range, with its start's rundown and every buffer holding an event in the range.")
final class ExportCommand implements Callable<Integer>, Denials {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--session", paramLabel = "ID", description = "the session id (host:logger:start time), as the pages and"
            + " `tail sessions` show it")
    String session;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE or DIR", description = "with --session, the .etl file to write (replaced"
            + " if it exists); with --host, the folder the files go into (default: the current one), each HOST-LOGGER-START.etl")
    Path output;

    @Option(names = "--host", paramLabel = "HOST", description = "export the sessions of this host between --from and --to")
    String host;

    @Option(names = "--from", paramLabel = "TIME", description = "with --host: the range's start, an ISO-8601 instant (2026-11-28T14:03:00Z)")
    String from;

    @Option(names = "--to", paramLabel = "TIME", description = "with --host: the range's end (excluded)")
    String to;

    @Option(names = "--from-beginning", description = "read the session's partition from its start, not from the session's"
            + " start time less an hour: for an ingester whose clock was more than an hour behind the trace host's")
    boolean fromBeginning;

    @Override
    public Integer call() throws Exception {
        if (session != null && host != null) throw new UserInputException("--session and --host exclude each other");
        if (host != null) return range();
        if (from != null || to != null) throw new UserInputException("--from and --to go with --host");
        if (session == null) throw new UserInputException("give --session ID -o FILE, or --host HOST --from TIME --to TIME");
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
            long[] lastTimestamp = {Long.MIN_VALUE};
            try (RawSessionReader reader = new RawSessionReader(bootstrap, kafka.prefix, kafka.clientConfig());
                 OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(part), 1 << 16)) {
                o = reader.read(session, fromBeginning, b -> {
                    lastTimestamp[0] = Math.max(lastTimestamp[0], b.header().timeStamp());
                    out.write(b.bytes());
                });
            } catch (RawSessionReader.Unavailable e) {
                throw new UserInputException(e.getMessage());
            }
            // a session of a watched file was published with its first buffer as the logger wrote it at the start, before
            // its stop rewrote the header's EndTime and count: one that ended complete gets them, as on the logger's disk
            if (o.ended() && o.incomplete() == null && o.buffers() > 0) RangeExport.finishHeader(part, (int) o.buffers(), lastTimestamp[0]);
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

    private Integer range() throws Exception {
        if (from == null || to == null) throw new UserInputException("--host needs --from and --to");
        String problem = LogfileHeader.hostProblem(host);
        if (problem != null) throw new UserInputException("--host: " + problem);
        long fromNanos = instantNanos("--from", from);
        long toNanos = instantNanos("--to", to);
        if (toNanos <= fromNanos) throw new UserInputException("--to " + to + " is not after --from " + from);
        Path dir = output == null ? Path.of(".") : output;
        if (!Files.isDirectory(dir)) throw new UserInputException("-o: " + dir + " is not a folder");
        kafka.validate(true);
        Path probe = partFile(dir.resolve("export.etl"));
        Files.delete(probe);
        String bootstrap = kafka.connect();
        PrintWriter out = spec.commandLine().getOut();
        int files = 0;
        try (RawSessionReader reader = new RawSessionReader(bootstrap, kafka.prefix, kafka.clientConfig())) {
            var sessions = reader.sessionsOf(host, Math.floorDiv(fromNanos, 1_000_000), Math.floorDiv(toNanos, 1_000_000));
            for (String s : sessions) {
                RangeExport.Plan plan;
                try {
                    plan = RangeExport.plan(reader, s, fromBeginning, fromNanos, toNanos);
                } catch (RawSessionReader.Unavailable e) {
                    throw new UserInputException(e.getMessage());
                }
                if (plan.inRange() == 0) continue;
                Path target = dir.resolve(io.swapstream.http.EtlApi.fileName(s));
                Path part = partFile(target);
                try {
                    long n;
                    try (OutputStream o = new java.io.BufferedOutputStream(Files.newOutputStream(part), 1 << 16)) {
                        n = RangeExport.write(reader, s, fromBeginning, plan, o);
                    } catch (RawSessionReader.Unavailable e) {
                        throw new UserInputException(e.getMessage());
                    }
                    Files.move(part, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    out.println(target + ": session " + s + ", " + n + " buffers (" + plan.inRange() + " with events in the range)");
                    files++;
                } finally {
                    Files.deleteIfExists(part);
                }
            }
            if (files == 0) {
                throw new UserInputException("no buffer of host " + host + " holds an event from " + from + " to " + to + " in "
                        + reader.topic() + (sessions.isEmpty() ? " (no session of it published since an hour before --from)"
                        : " (sessions " + String.join(", ", sessions) + " hold none there)"));
            }
        }
        out.flush();
        return 0;
    }

    @Override
    public Denied denied() {
        return Denied.of(RoleAcls.Role.EXPORT, kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, null, null, null));
    }

    static long instantNanos(String option, String value) {
        try {
            java.time.Instant i = java.time.Instant.parse(value);
            return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L), i.getNano());
        } catch (java.time.format.DateTimeParseException | ArithmeticException e) {
            throw new UserInputException(option + ": '" + value + "' is not an ISO-8601 instant such as 2026-11-28T14:03:00Z");
        }
    }

    /**
     * A new file beside {@code target}, where it is written before it is renamed to it: a failed export leaves no
     * half file, and a folder that cannot be written fails here. Made with the process's umask, as any file a command
     * writes (a temporary file's owner-only mode would stay with the export after the rename).
     */
    static Path partFile(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        while (true) {
            Path part = dir.resolve("." + target.getFileName() + "." + Long.toUnsignedString(random.nextLong(), 36) + ".part");
            try {
                return Files.createFile(part);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // another export chose the same name: another one
            }
        }
    }
}
