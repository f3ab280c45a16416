package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** This build's topologies name every topic, store and changelog as release 0.1.0's did: an upgrade finds what 0.1.0 stored. */
class TopologyNamesTest {
    @Test
    void theTopologiesKeepRelease010sNames() throws Exception {
        List<String> release010;
        try (InputStream in = TopologyNamesTest.class.getResourceAsStream("/release-0.1.0/topology-names.txt")) {
            release010 = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
        assertEquals(release010, TopologyNames.all());
    }
}
