package io.swapstream.cli;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.SwitchRowFormat;
import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.Denied;
import io.swapstream.cli.kafka.KafkaOptions;
import io.swapstream.cli.kafka.RoleAcls;
import io.swapstream.ingest.IngestPosition;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.RecordTopics;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.json.RecordJson;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "tail", description = "A topic of the pipeline as JSON lines, Avro decoded, committed records only;"
        + " exits at the end unless --follow.")
final class TailCommand implements Callable<Integer>, Denials {
    /** Every topic the pipeline writes: those it creates. */
    static final List<String> TOPICS = List.copyOf(io.swapstream.ingest.TopicSetup.topics().keySet());

    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Parameters(paramLabel = "TOPIC", description = "a topic, with or without the prefix: raw-buffers, sessions, switch-batches,"
            + " context-switches, threads, thread-stats, process-stats, host-stats, wake-edges, dead-letters or ingest-positions")
    String topic;

    @Option(names = "--from-beginning", description = "every record; without it, the last --last records of each partition")
    boolean fromBeginning;

    @Option(names = "--last", defaultValue = "10", paramLabel = "N", description = "the last N records of each partition, shown without --from-beginning")
    int last;

    @Option(names = "--follow", description = "keep printing new records until stopped") boolean follow;

    @Option(names = "--rows", description = "switch batches as one row per switch") boolean rows;

    @Option(names = "--stored", description = "switch batches as stored on the topic (differences, dictionary, presence bitmaps),"
            + " not decoded into a column per field") boolean stored;

    @Override
    public Integer call() throws Exception {
        Options.atLeast("--last", last, 0);
        String suffix = topic.startsWith(kafka.prefix) ? topic.substring(kafka.prefix.length()) : topic;
        if (!TOPICS.contains(suffix)) {
            throw new UserInputException("TOPIC: '" + topic + "' is not a topic of the pipeline; one of " + TOPICS
                    + " (prefix " + kafka.prefix + ")");
        }
        String name = SwapstreamConfig.topic(kafka.prefix, suffix);
        kafka.validate(true);
        String bootstrap = kafka.connect();
        PrintWriter out = spec.commandLine().getOut();
        Map<String, Object> c = new HashMap<>(kafka.clientConfig());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "swapstream-tail");
        // a reader creates nothing, whatever the broker allows
        c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        Map<String, Object> serdeConfig = new HashMap<>(kafka.clientConfig());
        serdeConfig.put(SwapstreamConfig.TOPIC_PREFIX, kafka.prefix);
        Function<ConsumerRecord<String, byte[]>, String> json = format(suffix, serdeConfig);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(name);
            if (infos == null || infos.isEmpty()) throw new UserInputException("topic " + name + " does not exist");
            List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(name, p.partition())).toList();
            consumer.assign(parts);
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            if (fromBeginning) {
                for (TopicPartition tp : parts) consumer.seek(tp, begin.get(tp));
            } else {
                for (TopicPartition tp : parts) {
                    for (ConsumerRecord<String, byte[]> r : lastRecords(consumer, tp, begin.get(tp), end.get(tp), last)) {
                        String line = json.apply(r);
                        if (line != null) out.println(line);
                    }
                }
                consumer.assign(parts);
                for (TopicPartition tp : parts) consumer.seek(tp, end.get(tp));
                out.flush();
            }
            while (follow || parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    String line = json.apply(r);
                    if (line != null) out.println(line);
                }
                out.flush();
            }
        }
        return 0;
    }

    @Override
    public Denied denied() {
        return Denied.of(RoleAcls.Role.READER, kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, null, null, null));
    }

    /**
     * The last {@code n} records of a partition. Offsets count transaction markers too (a committed transaction ends with
     * one), so {@code end - n} may hold fewer than n records: the look goes back further until it has them, or the start.
     */
    static List<ConsumerRecord<String, byte[]>> lastRecords(KafkaConsumer<String, byte[]> consumer, TopicPartition tp, long begin, long end,
                                                          int n) {
        if (n == 0 || end <= begin) return List.of();
        long back = Math.max(2L * n, n + 16L);
        while (true) {
            long from = Math.max(begin, end - back);
            consumer.assign(List.of(tp));
            consumer.seek(tp, from);
            List<ConsumerRecord<String, byte[]>> got = new java.util.ArrayList<>();
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500)).records(tp)) {
                    if (r.offset() < end) got.add(r);
                }
            }
            if (got.size() >= n || from == begin) return got.subList(Math.max(0, got.size() - n), got.size());
            back *= 2;
        }
    }

    /** How a topic's records read as JSON lines. */
    private Function<ConsumerRecord<String, byte[]>, String> format(String suffix, Map<String, Object> config) {
        if (suffix.equals(SwapstreamConfig.SWITCH_BATCHES)) return batches(SwitchBatchSerde.forConfig(config).deserializer());
        if (suffix.equals(SwapstreamConfig.INGEST_POSITIONS)) return TailCommand::position;
        Class<? extends SpecificRecord> type = RecordTopics.VALUE_TYPES.get(suffix);
        return type == null ? TailCommand::raw : avro(RecordSerdeFactory.from(config).serde(type, config).deserializer());
    }

    private static <T extends SpecificRecord> Function<ConsumerRecord<String, byte[]>, String> avro(Deserializer<T> d) {
        return r -> r.value() == null ? null : decoded(r, () -> RecordJson.toJson((org.apache.avro.generic.GenericRecord) d.deserialize(r.topic(), r.value())));
    }

    private Function<ConsumerRecord<String, byte[]>, String> batches(Deserializer<SwitchBatch> d) {
        return r -> r.value() == null ? null : decoded(r, () -> {
            SwitchBatch b = d.deserialize(r.topic(), r.value());
            if (stored) return RecordJson.toJson(SwitchBatchSerde.toAvro(b));
            if (!rows) return RecordJson.toJson(g -> SwitchRowFormat.columns(g, b));
            if (b.count() == 0) return null;
            return RecordJson.toJson(g -> {
                for (int i = 0; i < b.count(); i++) {
                    if (i > 0) g.writeRaw('\n');
                    SwitchRowFormat.json(g, b.row(i));
                }
            });
        });
    }

    private static String decoded(ConsumerRecord<String, byte[]> r, java.util.function.Supplier<String> json) {
        try {
            return json.get();
        } catch (SerializationException e) {
            return RecordJson.toJson(g -> {
                g.writeStartObject();
                g.writeStringField("undecodable", e.getMessage());
                g.writeNumberField("partition", r.partition());
                g.writeNumberField("offset", r.offset());
                g.writeEndObject();
            });
        }
    }

    /** A raw buffer or dead letter: its key, place, headers and size; the bytes themselves are binary. */
    private static String raw(ConsumerRecord<String, byte[]> r) {
        return RecordJson.toJson(g -> {
            g.writeStartObject();
            g.writeStringField("key", r.key());
            g.writeNumberField("partition", r.partition());
            g.writeNumberField("offset", r.offset());
            g.writeObjectFieldStart("headers");
            for (Header h : r.headers()) g.writeStringField(h.key(), new String(h.value(), StandardCharsets.UTF_8));
            g.writeEndObject();
            g.writeNumberField("bytes", r.value() == null ? 0 : r.value().length);
            g.writeEndObject();
        });
    }

    private static String position(ConsumerRecord<String, byte[]> r) {
        if (r.value() == null) return null;
        IngestPosition p;
        try {
            p = IngestPosition.decode(r.value());
        } catch (RuntimeException e) {
            return raw(r);
        }
        return RecordJson.toJson(g -> {
            g.writeStartObject();
            g.writeStringField("session", r.key());
            g.writeStringField("path", p.path());
            g.writeNumberField("nextIndex", p.nextIndex());
            g.writeNumberField("offset", p.offset());
            g.writeBooleanField("ended", p.ended());
            g.writeEndObject();
        });
    }
}
