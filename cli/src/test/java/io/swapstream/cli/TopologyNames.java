package io.swapstream.cli;

import io.swapstream.local.Directories;
import io.swapstream.local.Pipeline;
import io.swapstream.local.StageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;

/**
 * The names a release's topologies give Kafka: each stage's source and sink topics, its stores and
 * the changelog and repartition topics named after them. A release that renamed one would lose what
 * the one before stored there. Run as a program against an earlier release's jar
 * ({@code java -cp swapstream-0.1.0.jar:cli/target/test-classes io.swapstream.cli.TopologyNames}),
 * it prints that release's names, kept in the test resources.
 */
final class TopologyNames {
    private TopologyNames() {}

    static final String APP = "app";

    /** One line a name, sorted: {@code stage kind name}. */
    static List<String> all() throws Exception {
        TreeSet<String> lines = new TreeSet<>();
        Path state = Files.createTempDirectory("topology-names");
        try {
            for (String stage : List.of(StageConfig.DECODE, StageConfig.AGGREGATE, StageConfig.ROLLUP)) {
                Properties config = StageConfig.streams(stage, "unused:9092", APP, state, "etw.", (short) 1,
                        Pipeline.aggregateSettings(60_000_000_000L, 1000));
                Topology t = switch (stage) {
                    case StageConfig.DECODE -> Pipeline.decodeTopology(config);
                    case StageConfig.AGGREGATE -> Pipeline.aggregateTopology(config, null);
                    default -> Pipeline.rollupTopology(config, null);
                };
                String app = config.getProperty(org.apache.kafka.streams.StreamsConfig.APPLICATION_ID_CONFIG);
                for (TopologyDescription.Subtopology s : t.describe().subtopologies()) {
                    for (TopologyDescription.Node n : s.nodes()) {
                        if (n instanceof TopologyDescription.Source src) {
                            for (String topic : src.topicSet()) lines.add(stage + " source " + topic.replace(app, "APP"));
                        } else if (n instanceof TopologyDescription.Sink sink && sink.topic() != null) {
                            lines.add(stage + " sink " + sink.topic().replace(app, "APP"));
                        } else if (n instanceof TopologyDescription.Processor p) {
                            for (String store : p.stores()) lines.add(stage + " store " + store + " (changelog APP-" + store + "-changelog)");
                        }
                    }
                }
            }
        } finally {
            Directories.deleteTree(state);
        }
        return List.copyOf(lines);
    }

    public static void main(String[] args) throws Exception {
        for (String line : all()) System.out.println(line);
    }
}
