package io.swapstream.schemas.serde;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/** A Kafka serde for a generated Avro class in single-object encoding. */
public final class SingleObjectAvroSerde<T extends SpecificRecord> implements Serde<T>, Serializer<T>, Deserializer<T> {
    static {
        trustGeneratedPackage();
    }

    /**
     * With the generated classes' own encode and decode methods (Avro's "custom coders", off by
     * default), not the reflective walk of the schema: ThreadStatsSerdeBenchmark, rows per second.
     */
    static final SpecificData MODEL = new SpecificData();

    static {
        MODEL.setCustomCoders(true);
    }

    /** The single-object header: C3 01 and the schema's fingerprint, little-endian. */
    private final byte[] header;
    private final DatumWriter<T> writer;
    private final BinaryMessageDecoder<T> decoder;
    /** What the last release wrote of this type, when fields were added since; null when it wrote this schema. */
    private final ReleasedSchema released;

    /**
     * A thread's output and encoder, reused. The encoder writes straight into it: Avro 1.12's buffered encoder
     * copies every bytes field (the rows' sketches) into a new array first (its {@code writeFixed(ByteBuffer)} takes
     * a read-only view, which has no array), and ByteArrayOutputStream's own writes are synchronized.
     */
    private static final class Output extends java.io.ByteArrayOutputStream {
        BinaryEncoder encoder;

        @Override
        public void write(int b) {
            if (count == buf.length) buf = Arrays.copyOf(buf, buf.length * 2);
            buf[count++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (count + len > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, count + len));
            System.arraycopy(b, off, buf, count, len);
            count += len;
        }

        byte[] bytes() {
            return Arrays.copyOf(buf, count);
        }

        /** What was written but its last {@code n} bytes. */
        byte[] bytesBut(int n) {
            return Arrays.copyOf(buf, count - n);
        }

        /** Whether what was written ends with the release's added fields' defaults. */
        boolean endsWithTail(ReleasedSchema r) {
            return r.endsWithTail(buf, count);
        }
    }

    private static final ThreadLocal<Output> OUTPUT = ThreadLocal.withInitial(Output::new);

    public SingleObjectAvroSerde(Class<T> type) {
        Schema schema = SpecificData.get().getSchema(type);
        this.header = java.nio.ByteBuffer.allocate(10).order(java.nio.ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
                .putLong(org.apache.avro.SchemaNormalization.parsingFingerprint64(schema)).array();
        this.writer = MODEL.createDatumWriter(schema);
        this.decoder = new BinaryMessageDecoder<>(MODEL, schema);
        // records written under an earlier schema still read, new fields at their defaults
        for (Schema earlier : SchemaHistory.earlier(type)) decoder.addSchema(earlier);
        this.released = ReleasedSchema.of(type, schema);
    }

    /**
     * Avro 1.12 decodes generated classes only from trusted packages, read once from a system
     * property when the specific reader class loads: add ours before that happens.
     */
    static void trustGeneratedPackage() {
        String key = "org.apache.avro.SERIALIZABLE_PACKAGES";
        Set<String> packages = new LinkedHashSet<>();
        String existing = System.getProperty(key);
        if (existing != null && !existing.isBlank()) packages.addAll(Arrays.asList(existing.split(",")));
        packages.add("io.swapstream.schemas.avro");
        System.setProperty(key, String.join(",", packages));
    }

    /**
     * The record in single-object encoding: as the last release wrote it when the fields added since hold their
     * defaults ({@link ReleasedSchema}), so that release's instances read it; else in this build's schema.
     */
    @Override
    public byte[] serialize(String topic, T data) {
        if (data == null) return null;
        if (released != null && released.holds(data)) {
            Output out = write(released.header, data);
            // the added fields' defaults are the body's last bytes: without them, it is the release's record
            if (out.endsWithTail(released)) return out.bytesBut(released.tailLength());
        }
        return encode(header, data);
    }

    /** {@code prefix}, then the record's Avro binary body. */
    byte[] encode(byte[] prefix, T data) {
        return write(prefix, data).bytes();
    }

    /** The thread's output, holding {@code prefix} and the record's Avro binary body. */
    private Output write(byte[] prefix, T data) {
        try {
            Output out = OUTPUT.get();
            out.reset();
            out.write(prefix);
            out.encoder = EncoderFactory.get().directBinaryEncoder(out, out.encoder);
            writer.write(data, out.encoder);
            out.encoder.flush();
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) return null;
        if (RegistryFraming.isFramed(data)) throw RegistryFraming.needsRegistry(topic, data);
        try {
            return decoder.decode(data);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode a " + topic + " value: " + e.getMessage(), e);
        }
    }

    @Override
    public void configure(java.util.Map<String, ?> configs, boolean isKey) {}

    @Override
    public void close() {}

    @Override
    public Serializer<T> serializer() { return this; }

    @Override
    public Deserializer<T> deserializer() { return this; }
}
