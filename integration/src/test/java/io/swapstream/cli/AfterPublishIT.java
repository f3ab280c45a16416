package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.BufferPublisher;
import io.swapstream.ingest.TopicSetup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ingest --watch --after-publish}: a file goes (deleted or moved) only after its last buffer and its end
 * marker are committed. An ingester killed with SIGKILL at each step (publishing, ending, ended but not yet
 * moved, gone) and started again neither loses the file nor publishes it twice: every buffer of each session is
 * on the topic once, with one end marker. And the host of a watched file is the machine's name, not the file's.
 */
@ExtendWith(KafkaBroker.class)
class AfterPublishIT {
    @TempDir Path dir;

    /** A trace of {@code switches}, its session starting {@code minute} minutes after the others'. */
    private static Path trace(Path at, int minute, int switches) throws Exception {
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(switches).withSeed(minute).withBufferSize(8 * 1024)
                .withStartTime(134_000_000_000_000_000L + minute * 600_000_000L);
        TraceGenerator.generate(at, o, MaximumWaitReason.forBuild(o.build()));
        return at;
    }

    private static StageProcess watcher(Path log, String servers, String prefix, Path watched, String afterPublish) throws Exception {
        return StageProcess.start(log, "ingest", "--watch", watched.toString(), "-b", servers, "--topic-prefix", prefix,
                "--host", "web01", "--quiet", "2s", "--poll", "200ms", "--after-publish", afterPublish);
    }

    @Test
    void aFileGoesOnlyOnceItsEndIsCommittedAndAKilledIngesterNeitherLosesNorRepublishesIt(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "after" + UUID.randomUUID().toString().substring(0, 6) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
        }
        Path watched = Files.createDirectories(dir.resolve("watched"));
        Path log = dir.resolve("ingest.log");

        // killed while it publishes the buffers: started again, it goes on from the committed position, and the file goes
        Path a = trace(dir.resolve("a.etl"), 1, 60_000);
        String sessionA = BufferPublisher.sessionOf(a, "web01");
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "delete")) {
            Files.copy(a, watched.resolve("a.etl"));
            w.awaitLog("following session " + sessionA, Duration.ofSeconds(60));
            w.kill9();
        }
        assertTrue(Files.exists(watched.resolve("a.etl")), "killed before the end: the file is there");
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "delete")) {
            w.awaitLog("published and ended: deleted", Duration.ofSeconds(60));
        }
        assertFalse(Files.exists(watched.resolve("a.etl")));
        ClusterFaultIT.assertEachBufferOnce(kafka.servers(), prefix, sessionA);

        // killed as it ends the session (the end marker in a transaction that may or may not have committed)
        Path b = trace(dir.resolve("b.etl"), 2, 20_000);
        String sessionB = BufferPublisher.sessionOf(b, "web01");
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "delete")) {
            Files.copy(b, watched.resolve("b.etl"));
            w.awaitLog("session " + sessionB + " ended after", Duration.ofSeconds(60));
            w.kill9();
        }
        // the kill may have come before the commit, or after it and the delete: either way, started again, it ends as once
        boolean stillThere = Files.exists(watched.resolve("b.etl"));
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "delete")) {
            if (stillThere) w.awaitLog(watched.resolve("b.etl") + ": session " + sessionB + " published and ended: deleted", Duration.ofSeconds(60));
            else w.awaitLog("watching", Duration.ofSeconds(60));
            Thread.sleep(1_000);
        }
        assertFalse(Files.exists(watched.resolve("b.etl")));
        ClusterFaultIT.assertEachBufferOnce(kafka.servers(), prefix, sessionB);

        // ended and committed, but not yet moved (where it goes, a file stands in the way): killed there, started
        // again with somewhere it can go, it moves the file and publishes nothing again
        Path c = trace(dir.resolve("c.etl"), 3, 20_000);
        String sessionC = BufferPublisher.sessionOf(c, "web01");
        Path blocked = Files.writeString(dir.resolve("not-a-folder"), "x");
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "move:" + blocked.resolve("done"))) {
            Files.copy(c, watched.resolve("c.etl"));
            w.awaitLog("c.etl: cannot be moved now", Duration.ofSeconds(60));
            w.kill9();
        }
        assertTrue(Files.exists(watched.resolve("c.etl")), "its end committed, the file is still there");
        Path done = dir.resolve("done");
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "move:" + done)) {
            w.awaitLog("session " + sessionC + " was published and ended before; not published again", Duration.ofSeconds(60));
            w.awaitLog("published and ended: moved to " + done.resolve("c.etl"), Duration.ofSeconds(60));
        }
        assertTrue(Files.exists(done.resolve("c.etl")));
        assertEquals(Files.size(c), Files.size(done.resolve("c.etl")), "moved whole");
        ClusterFaultIT.assertEachBufferOnce(kafka.servers(), prefix, sessionC);

        // killed once the file is gone: started again, nothing of it is published again
        try (StageProcess w = watcher(log, kafka.servers(), prefix, watched, "delete")) {
            w.awaitLog("watching", Duration.ofSeconds(60));
            Thread.sleep(1_000); // a few looks at the folder
        }
        for (String s : new String[] {sessionA, sessionB, sessionC}) ClusterFaultIT.assertEachBufferOnce(kafka.servers(), prefix, s);
    }

    @Test
    void aWatchedFilesHostIsThisMachinesNameUnlessItsFileNameIsAsked(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "host" + UUID.randomUUID().toString().substring(0, 6) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
        }
        Path watched = Files.createDirectories(dir.resolve("hosts"));
        Files.copy(trace(dir.resolve("t.etl"), 4, 5_000), watched.resolve("kernel.etl"));
        Files.writeString(watched.resolve("notes.txt"), "not a trace");
        Files.writeString(watched.resolve("text.etl"), "a text file with the extension of a trace");
        Files.createDirectories(watched.resolve("older"));
        Path log = dir.resolve("hosts.log");
        String machine = Options.machineName();
        try (StageProcess w = StageProcess.start(log, "ingest", "--watch", watched.toString(), "-b", kafka.servers(), "--topic-prefix", prefix,
                "--quiet", "2s", "--poll", "200ms")) {
            w.awaitLog("watching " + watched + " as host " + machine, Duration.ofSeconds(60));
            w.awaitLog("following session " + machine + ":NT Kernel Logger:", Duration.ofSeconds(60));
            w.awaitLog("notes.txt: not followed: not an .etl file", Duration.ofSeconds(60));
            w.awaitLog("text.etl: not followed: ", Duration.ofSeconds(60));
            w.awaitLog("text.etl: not followed: its first bytes are not a buffer header: not an ETL file", Duration.ofSeconds(60));
            w.awaitLog("older: not followed: a folder", Duration.ofSeconds(60));
            Thread.sleep(1_000);
        }
        String all = Files.readString(log);
        assertEquals(1, all.split("notes.txt: not followed", -1).length - 1, "said once:\n" + all);
        assertFalse(all.contains("kernel:NT Kernel Logger"), "not the file's name:\n" + all);
        Path shipped = Files.createDirectories(dir.resolve("shipped"));
        Files.copy(trace(dir.resolve("s.etl"), 5, 5_000), shipped.resolve("db01.etl"));
        try (StageProcess w = StageProcess.start(dir.resolve("shipped.log"), "ingest", "--watch", shipped.toString(), "-b", kafka.servers(),
                "--topic-prefix", prefix, "--host-from-file-name", "--quiet", "2s", "--poll", "200ms")) {
            w.awaitLog("following session db01:NT Kernel Logger:", Duration.ofSeconds(60));
        }
    }
}
