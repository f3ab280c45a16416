package io.swapstream.schemas.serde;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A generated Avro class in Confluent's wire format, its schema registered under the topic's value
 * subject. Reads either framing: single-object records written before the registry came still read.
 * The five-byte prefix is written here rather than by Apicurio's serializer, which renders the
 * record's schema as JSON for every record to find its id and takes no custom coders.
 */
public final class RegistryAvroSerde<T extends SpecificRecord> implements Serde<T>, Serializer<T>, Deserializer<T> {
    private final SingleObjectAvroSerde<T> singleObject;
    private final SchemaRegistry registry;
    private final Schema schema;
    private final Map<String, byte[]> prefixes = new ConcurrentHashMap<>();
    private final Map<Integer, DatumReader<T>> readers = new ConcurrentHashMap<>();
    private static final ThreadLocal<BinaryDecoder[]> DECODER = ThreadLocal.withInitial(() -> new BinaryDecoder[1]);

    public RegistryAvroSerde(Class<T> type, SchemaRegistry registry) {
        this.singleObject = new SingleObjectAvroSerde<>(type);
        this.registry = registry;
        this.schema = SpecificData.get().getSchema(type);
    }

    @Override
    public byte[] serialize(String topic, T data) {
        if (data == null) return null;
        byte[] prefix = prefixes.computeIfAbsent(topic, t -> registry.prefix(t, schema));
        return singleObject.encode(prefix, data);
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) return null;
        if (!RegistryFraming.isFramed(data)) return singleObject.deserialize(topic, data);
        int id = RegistryFraming.id(data);
        DatumReader<T> reader = readers.computeIfAbsent(id, this::reader);
        try {
            BinaryDecoder[] d = DECODER.get();
            d[0] = DecoderFactory.get().binaryDecoder(data, RegistryFraming.PREFIX_BYTES, data.length - RegistryFraming.PREFIX_BYTES, d[0]);
            return reader.read(null, d[0]);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode a " + topic + " value of schema id " + id + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private DatumReader<T> reader(int id) {
        Schema writer = registry.schema(id);
        if (!writer.getFullName().equals(schema.getFullName())) {
            throw new SerializationException("schema id " + id + " is a " + writer.getFullName() + ", not a " + schema.getFullName());
        }
        return (DatumReader<T>) SingleObjectAvroSerde.MODEL.createDatumReader(writer, schema);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {}

    @Override
    public void close() {}

    @Override
    public Serializer<T> serializer() { return this; }

    @Override
    public Deserializer<T> deserializer() { return this; }
}
