package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.swapstream.ingest.TopicSetup;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A changelog's segment takes the largest record the changelog does: the broker refuses a batch
 * larger than a segment. Changelogs an earlier version made with 4 MiB segments are raised when a
 * stage starts; larger ones are left alone.
 */
@ExtendWith(KafkaBroker.class)
class ChangelogTopicsIT {
    @Test
    void smallerSegmentsOfExistingChangelogsAreRaisedAndNewChangelogsHaveTheSize(KafkaBroker.Bootstrap kafka) throws Exception {
        String app = "seg" + UUID.randomUUID().toString().substring(0, 6);
        String old = app + "-old-changelog", large = app + "-large-changelog", fresh = app + "-fresh-changelog";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.servers()))) {
            admin.createTopics(List.of(
                    new NewTopic(old, 1, (short) 1).configs(Map.of("cleanup.policy", "compact", "segment.bytes", String.valueOf(4 << 20))),
                    new NewTopic(large, 1, (short) 1).configs(Map.of("cleanup.policy", "compact", "segment.bytes", String.valueOf(64 << 20)))))
                    .all().get();
            TopicSetup.ensureChangelogs(admin, app, List.of("old", "large", "fresh"), 1, (short) 1);
            // a broker applies a config change from the metadata log a moment after the change is acknowledged
            String expected = String.valueOf(TopicSetup.CHANGELOG_SEGMENT_BYTES);
            long until = System.nanoTime() + 10_000_000_000L;
            while (!expected.equals(segment(admin, old)) && System.nanoTime() < until) Thread.sleep(50);
            assertEquals(expected, segment(admin, old), "raised");
            assertEquals(String.valueOf(64 << 20), segment(admin, large), "never lowered");
            assertEquals(String.valueOf(TopicSetup.CHANGELOG_SEGMENT_BYTES), segment(admin, fresh));
        }
    }

    static String segment(Admin admin, String topic) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(r)).all().get().get(r).get("segment.bytes").value();
    }
}
