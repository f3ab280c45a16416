package io.swapstream.cli;

import io.swapstream.etw.LogfileHeader;
import io.swapstream.ingest.RawSessionReader;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code archive --to DIR}: a long-lived consumer of {@code etw.raw-buffers} that writes every session, once its end
 * marker is committed, to {@code DIR/HOST/START.etl} (the session's file, as {@code export --session} writes it).
 *
 * <p>Exactly once across restarts: a session is written to {@code START.etl.part} and renamed, and the group's
 * offset passes its end marker only after the rename. A restart after a kill reads the marker again: a finished
 * file is left as it is, a partial one is deleted and written again, so there is never two files nor none.
 */
@Command(name = "archive", description = "Writes every session of etw.raw-buffers, once ended, to DIR/HOST/START.etl, exactly once"
        + " across restarts; with --keep and --max-size, the oldest files go first.")
final class ArchiveCommand implements Callable<Integer> {
    /** The consumer group's default: one archive per folder, restarted under the same name. */
    static final String DEFAULT_GROUP = "swapstream-archive";
    static final String PART = ".part";
    /**
     * For ArchiveIT only: stop for good after the first buffer of the first session written, so that a kill -9 lands
     * mid-write however fast the machine runs the test.
     */
    static final String STALL_PROPERTY = "swapstream.archive.stall-mid-write";

    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--to", required = true, paramLabel = "DIR", description = "the archive's folder (made if missing)")
    Path to;

    @Option(names = "--keep", paramLabel = "DURATION", description = "delete archived files older than this (e.g. 30d); default: keep all")
    String keep;

    @Option(names = "--max-size", paramLabel = "BYTES", description = "delete the oldest archived files while the folder holds more than this")
    Long maxSize;

    @Option(names = "--group-id", defaultValue = DEFAULT_GROUP, paramLabel = "ID", description = "the consumer group that keeps how far"
            + " this archive has come; one a folder")
    String groupId;

    private boolean stalled;

    @Override
    public Integer call() throws Exception {
        long keepMs = keep == null ? -1 : Options.positiveDuration("--keep", keep) / 1_000_000;
        if (maxSize != null) Options.atLeast("--max-size", maxSize, 1);
        kafka.validate(true);
        if (Files.exists(to) && !Files.isDirectory(to)) throw new UserInputException("--to: " + to + " is not a folder");
        Files.createDirectories(to);
        Files.delete(ExportCommand.partFile(to.resolve("archive.etl"))); // a folder that cannot be written fails here
        String bootstrap = kafka.connect();
        String topic = SwapstreamConfig.topic(kafka.prefix, SwapstreamConfig.RAW_BUFFERS);
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Object> c = new HashMap<>(kafka.clientConfig());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        // only end markers matter here; a poll holds at most about a MiB of buffers
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1 << 20);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-archive");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
             RawSessionReader reader = new RawSessionReader(bootstrap, kafka.prefix, kafka.clientConfig())) {
            consumer.subscribe(List.of(topic));
            err.println("swapstream archive: writing the ended sessions of " + topic + " to " + to.toAbsolutePath());
            err.flush();
            while (true) {
                ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(500));
                for (TopicPartition tp : records.partitions()) {
                    for (ConsumerRecord<String, byte[]> r : records.records(tp)) {
                        if (r.key() == null || r.headers().lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) == null) continue;
                        archive(reader, r.key(), err);
                        // past the marker only once its file is there: a restart before this writes it again
                        consumer.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1)));
                    }
                }
                if (!records.isEmpty()) consumer.commitSync();
                prune(keepMs, err);
            }
        }
    }

    /** Writes {@code session} to DIR/HOST/START.etl unless it is there; a partial file of an earlier run is redone. */
    void archive(RawSessionReader reader, String session, PrintWriter err) throws IOException {
        String start = session.substring(session.lastIndexOf(':') + 1);
        Path dir = to.resolve(LogfileHeader.hostOf(session));
        Path target = dir.resolve(start + ".etl");
        if (Files.exists(target)) return; // archived before a restart, or the same file ingested twice
        Files.createDirectories(dir);
        Path part = dir.resolve(start + ".etl" + PART);
        if (Files.deleteIfExists(part)) err.println("swapstream archive: " + part + ": left by an earlier run; written again");
        err.println("swapstream archive: writing " + session + " to " + part);
        err.flush();
        RawSessionReader.Outcome o;
        try (FileChannel ch = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
             OutputStream out = new java.io.BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16)) {
            o = reader.read(session, false, b -> {
                out.write(b.bytes());
                if (!stalled && Boolean.getBoolean(STALL_PROPERTY)) {
                    stalled = true;
                    out.flush();
                    err.println("swapstream archive: stopped mid-write, as " + STALL_PROPERTY + " asks");
                    err.flush();
                    stall();
                }
            });
            out.flush();
            ch.force(true);
        } catch (RawSessionReader.Unavailable e) {
            Files.deleteIfExists(part);
            err.println("swapstream archive: " + session + " not archived: " + e.getMessage());
            err.flush();
            return;
        }
        Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
        err.println("swapstream archive: archived " + session + " as " + target + " (" + o.buffers() + " buffers, " + o.bytes() + " bytes"
                + (o.incomplete() == null ? "" : "; ended incomplete: " + o.incomplete()) + ")");
        err.flush();
    }

    private static void stall() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Deletes archived files past --keep, then the oldest while the folder holds more than --max-size. */
    void prune(long keepMs, PrintWriter err) throws IOException {
        if (keepMs < 0 && maxSize == null) return;
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(to, 2)) {
            s.filter(p -> p.getFileName().toString().endsWith(".etl") && Files.isRegularFile(p)).forEach(files::add);
        }
        Map<Path, Long> modified = new HashMap<>();
        for (Path p : files) modified.put(p, Files.getLastModifiedTime(p).toMillis());
        files.sort(java.util.Comparator.comparing(modified::get));
        long now = System.currentTimeMillis();
        long total = 0;
        for (Path p : files) total += Files.size(p);
        for (Path p : files) {
            boolean old = keepMs >= 0 && now - modified.get(p) > keepMs;
            boolean over = maxSize != null && total > maxSize;
            if (!old && !over) continue;
            total -= Files.size(p);
            Files.deleteIfExists(p);
            err.println("swapstream archive: deleted " + p + (old ? " (older than --keep " + keep + ")" : " (the folder is over --max-size)"));
        }
        err.flush();
    }
}
