package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.ingest.AfterPublish;
import io.swapstream.ingest.DirectoryIngest;
import io.swapstream.ingest.TopicSetup;
import io.swapstream.ingest.WatcherIds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A watcher whose producer is fenced (a broker restart can make the coordinator do it) takes over
 * again with a new producer; two watchers of one directory fence each other only a few times before
 * one of them stops.
 */
@ExtendWith(KafkaBroker.class)
class WatcherFencingIT {
    @TempDir Path dir;

    @Test
    void aFencedWatcherTakesOverAFewTimesThenStops(KafkaBroker.Bootstrap kafka) throws Exception {
        String prefix = "fence" + UUID.randomUUID().toString().substring(0, 6) + ".";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            TopicSetup.ensure(admin, prefix, 1, (short) 1);
        }
        DirectoryIngest.Settings settings = new DirectoryIngest.Settings(dir, "h", 60_000, prefix, kafka.servers(),
                "swapstream-ingest-" + prefix, null, Map.of(), AfterPublish.KEEP, null);
        // a trace that grows a buffer at a time, so that every look at the directory has one to publish
        Path whole = Files.createDirectories(dir.resolve("source")).resolve("whole.etl"); // not watched: the watcher does not recurse
        GeneratorOptions o = GeneratorOptions.defaults().withSwitches(20_000).withBufferSize(8 * 1024);
        TraceGenerator.generate(whole, o, MaximumWaitReason.forBuild(o.build()));
        byte[] bytes = Files.readAllBytes(whole);
        Path growing = dir.resolve("h.etl");
        int[] buffers = {1};
        Runnable grow = () -> {
            try {
                Files.write(growing, java.util.Arrays.copyOf(bytes, Math.min(bytes.length, ++buffers[0] * 8 * 1024)));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        grow.run();
        List<String> lines = new ArrayList<>();
        try (DirectoryIngest first = new DirectoryIngest(settings, lines::add)) {
            first.poll(0);
            long now = 1_000;
            for (int i = 0; i < WatcherIds.MAX_FENCINGS; i++) {
                grow.run();
                try (DirectoryIngest twin = new DirectoryIngest(settings, line -> { })) { // fences the first
                    twin.poll(now);
                }
                grow.run();
                first.poll(now); // fenced: a new producer takes over
                first.poll(now); // and goes on from the committed positions
                now += 1_000;
            }
            assertEquals(WatcherIds.MAX_FENCINGS, lines.stream().filter(l -> l.contains("a new producer takes over")).count(),
                    lines.toString());
            grow.run();
            try (DirectoryIngest twin = new DirectoryIngest(settings, line -> { })) {
                twin.poll(now);
            }
            grow.run();
            final long at = now;
            assertThrows(ProducerFencedException.class, () -> first.poll(at), "fenced again and again: it has a twin, and stops");
        }
    }
}
