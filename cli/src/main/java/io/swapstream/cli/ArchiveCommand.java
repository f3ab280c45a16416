package io.swapstream.cli;

import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.Denied;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.export.ArchivePruning;
import io.swapstream.export.FlightRecorder;
import io.swapstream.export.HostCondition;
import io.swapstream.export.MinuteArchive;
import io.swapstream.ingest.RawSessionReader;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.HostStats;
import io.swapstream.schemas.serde.RecordSerdeFactory;
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
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
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
 *
 * <p>With {@code --hosts} or {@code --when} it is a flight recorder instead ({@link FlightRecorder}): it follows the
 * host roll-ups on {@code etw.host-stats} and keeps only the chosen minutes, each as a range export
 * ({@link MinuteArchive}), once across restarts in the same way (the offset passes a roll-up row after its files).
 */
@Command(name = "archive", description = "Writes every session of etw.raw-buffers, once ended, to DIR/HOST/START.etl, exactly once"
        + " across restarts; with --hosts or --when, only chosen minutes, each as a range export to DIR/HOST/MINUTE_START.etl;"
        + " with --keep and --max-size, the oldest files go first.")
public final class ArchiveCommand implements Callable<Integer>, Denials {
    /** The consumer group's default: one archive per folder, restarted under the same name. */
    public static final String DEFAULT_GROUP = "swapstream-archive";
    /** The flight recorder's default group: it follows another topic, so it keeps its own place. */
    static final String DEFAULT_MINUTES_GROUP = "swapstream-archive-minutes";
    /**
     * For ArchiveIT only: stop for good after the first buffer of the first session written, so that a kill -9 lands
     * mid-write however fast the machine runs the test.
     */
    static final String STALL_PROPERTY = "swapstream.archive.stall-mid-write";

    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--to", required = true, paramLabel = "DIR", description = "the archive's folder (made if missing)")
    Path to;

    @Option(names = "--keep", paramLabel = "DURATION", description = "delete archived files written longer ago than this (e.g. 30d);"
            + " default: keep all")
    Duration keep;

    @Option(names = "--max-size", paramLabel = "BYTES", description = "delete the oldest archived files while the folder's .etl files"
            + " hold more than this many bytes")
    Long maxSize;

    @Option(names = "--hosts", split = ",", paramLabel = "HOST", description = "flight recorder: keep only the minutes of these hosts"
            + " (every minute, or with --when those that meet it)")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--when", paramLabel = "CONDITION", description = "flight recorder: keep the minutes whose host roll-up"
            + " (etw.host-stats) meets this, and the minute before: 'FIELD OP VALUE', e.g. 'readyP99 > 10ms' or 'switchInCount >= 1000000';"
            + " FIELD a numeric HostStats field (Nanos optional), OP > >= < <=; repeat for any of several")
    List<String> when = new ArrayList<>();

    @Option(names = "--group-id", paramLabel = "ID", description = "the consumer group that keeps how far this archive has come; one a"
            + " folder (default: " + DEFAULT_GROUP + "-, with --hosts or --when " + DEFAULT_MINUTES_GROUP + "-, then a digest of"
            + " the folder's absolute path)")
    String groupId;

    private boolean stalled;

    /**
     * {@code base-DIGEST}, the digest of the folder's absolute path: two archives to two folders, both on the default,
     * must not share a group (each would get only some of the partitions, and so write only some of the sessions),
     * and the same folder keeps its group across restarts.
     */
    static String defaultGroup(String base, Path folder) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(folder.toAbsolutePath().normalize().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return base + "-" + java.util.HexFormat.of().formatHex(d, 0, 6);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public Integer call() throws Exception {
        long keepMs = keep == null ? -1 : keep.toMillis();
        if (maxSize != null) Options.atLeast("--max-size", maxSize, 1);
        ArchivePruning pruning = new ArchivePruning(keepMs, maxSize);
        FlightRecorder recorder = flightRecorder();
        kafka.validate(true);
        if (Files.exists(to) && !Files.isDirectory(to)) throw new UserInputException("--to: " + to + " is not a folder");
        Files.createDirectories(to);
        Files.delete(ExportCommand.partFile(to.resolve("archive.etl"))); // a folder that cannot be written fails here
        String bootstrap = kafka.connect();
        String topic = SwapstreamConfig.topic(kafka.prefix, recorder == null ? SwapstreamConfig.RAW_BUFFERS : SwapstreamConfig.HOST_STATS);
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Object> c = new HashMap<>(kafka.clientConfig());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        String group = groupId != null ? groupId : defaultGroup(recorder == null ? DEFAULT_GROUP : DEFAULT_MINUTES_GROUP, to);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        // only end markers matter here; a poll holds at most about a MiB of buffers
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1 << 20);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-archive");
        if (recorder != null) {
            // a roll-up row may take minutes of range exports: a poll hands over a few, so the group keeps the member
            c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 4);
            c.putIfAbsent(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, (int) Duration.ofMinutes(30).toMillis());
        }
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
             RawSessionReader reader = new RawSessionReader(bootstrap, kafka.prefix, kafka.clientConfig())) {
            consumer.subscribe(List.of(topic));
            if (recorder == null) err.println("swapstream archive: writing the ended sessions of " + topic + " to " + to.toAbsolutePath());
            else err.println("swapstream archive: keeping the minutes of " + (recorder.hosts().isEmpty() ? "every host"
                    : String.join(", ", new java.util.TreeSet<>(recorder.hosts())))
                    + (recorder.when().isEmpty() ? "" : " whose roll-up on " + topic + " meets " + recorder.when() + ", with the minute before")
                    + ", to " + to.toAbsolutePath());
            err.println("swapstream archive: its place is kept by the consumer group " + group);
            err.flush();
            MinuteArchive minutes = new MinuteArchive(to, reader, err);
            Deserializer<HostStats> rows = recorder == null ? null
                    : RecordSerdeFactory.from(kafka.clientConfig()).serde(HostStats.class, kafka.clientConfig()).deserializer();
            while (true) {
                ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(500));
                for (TopicPartition tp : records.partitions()) {
                    for (ConsumerRecord<String, byte[]> r : records.records(tp)) {
                        if (recorder == null) {
                            if (r.key() == null || r.headers().lastHeader(SwapstreamConfig.HEADER_END_OF_SESSION) == null) continue;
                            archive(reader, r.key(), err);
                        } else if (!keepMinutes(recorder, minutes, rows, r, err)) {
                            continue;
                        }
                        // past the record only once its files are there: a restart before this writes them again
                        consumer.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1)));
                    }
                }
                if (!records.isEmpty()) consumer.commitSync();
                pruning.prune(to, System.currentTimeMillis(), d -> err.println("swapstream archive: deleted " + d.file()
                        + (d.forAge() ? " (older than --keep " + keep + ")" : " (the folder is over --max-size " + maxSize + ")")));
                err.flush();
            }
        }
    }

    @Override
    public Denied denied() {
        return Denied.of(RoleAcls.Role.ARCHIVE, kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, null, null, groupId));
    }

    /** The flight recorder of --hosts and --when, or null for the whole-session archive. */
    FlightRecorder flightRecorder() {
        if (hosts.isEmpty() && when.isEmpty()) return null;
        java.util.Set<String> chosen = new java.util.LinkedHashSet<>();
        for (String h : hosts) {
            if (h.isBlank()) throw new UserInputException("--hosts: an empty host name in '" + String.join(",", hosts) + "'");
            chosen.add(Options.checkedHost(h.strip(), "--hosts"));
        }
        List<HostCondition> conditions = new ArrayList<>();
        for (String w : when) {
            try {
                conditions.add(HostCondition.parse(w));
            } catch (IllegalArgumentException e) {
                throw new UserInputException(e.getMessage());
            }
        }
        return new FlightRecorder(chosen, conditions);
    }

    /** Keeps the minutes roll-up row {@code r} asks for; false when it asks for none (nothing to commit for it alone). */
    private static boolean keepMinutes(FlightRecorder recorder, MinuteArchive minutes, Deserializer<HostStats> rows,
                                       ConsumerRecord<String, byte[]> r, PrintWriter err) throws IOException {
        if (r.value() == null) return false;
        HostStats row;
        try {
            row = rows.deserialize(r.topic(), r.headers(), r.value());
        } catch (RuntimeException e) {
            err.println("swapstream archive: " + r.topic() + " partition " + r.partition() + " offset " + r.offset()
                    + ": not a host roll-up row, skipped: " + e.getMessage());
            return false;
        }
        List<FlightRecorder.Minute> keep = recorder.minutes(row);
        if (keep.isEmpty()) return false;
        HostCondition met = recorder.met(row);
        String why = recorder.when().isEmpty() ? "--hosts" : "its roll-up meets " + met;
        for (FlightRecorder.Minute m : keep) {
            minutes.archive(m, m.toNanos() == row.getWindowEndNanos() ? why : "the minute before one whose roll-up meets " + met);
        }
        return true;
    }

    /** Writes {@code session} to DIR/HOST/START.etl unless it is there; a partial file of an earlier run is redone. */
    void archive(RawSessionReader reader, String session, PrintWriter err) throws IOException {
        String start = session.substring(session.lastIndexOf(':') + 1);
        Path dir = to.resolve(LogfileHeader.hostOf(session));
        Path target = dir.resolve(start + ".etl");
        if (Files.exists(target)) return; // archived before a restart, or the same file ingested twice
        Files.createDirectories(dir);
        Path part = dir.resolve(start + ".etl" + MinuteArchive.PART);
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
}
