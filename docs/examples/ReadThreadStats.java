import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Prints the final rows of etw.thread-stats as they come: java ReadThreadStats.java [BOOTSTRAP] (schemas from ./schemas). */
public class ReadThreadStats {
    public static void main(String[] args) throws Exception {
        // every schema a writer may have used, by its fingerprint: `swapstream schemas --out schemas` writes them
        Map<Long, Schema> byFingerprint = new HashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of("schemas"), "*.avsc")) {
            for (Path f : files) {
                Schema s = new Schema.Parser().parse(f.toFile());
                byFingerprint.put(SchemaNormalization.parsingFingerprint64(s), s);
            }
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", args.length > 0 ? args[0] : "127.0.0.1:9092");
        p.put("group.id", "my-reader");
        p.put("isolation.level", "read_committed");
        p.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of("etw.thread-stats"));
            while (true) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
                    // Avro single-object encoding: C3 01, the writer schema's fingerprint (8 bytes, little-endian), the body
                    ByteBuffer b = ByteBuffer.wrap(r.value()).order(ByteOrder.LITTLE_ENDIAN);
                    if (b.get() != (byte) 0xC3 || b.get() != 0x01) continue;
                    Schema writer = byFingerprint.get(b.getLong());
                    if (writer == null) continue; // a newer release's schema: run its `swapstream schemas`
                    GenericRecord row = new GenericDatumReader<GenericRecord>(writer)
                            .read(null, DecoderFactory.get().binaryDecoder(r.value(), 10, r.value().length - 10, null));
                    if ((Boolean) row.get("final")) System.out.println(r.key() + " wait p99 " + row.get("waitP99Nanos"));
                }
            }
        }
    }
}
