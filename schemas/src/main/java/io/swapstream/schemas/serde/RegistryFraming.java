package io.swapstream.schemas.serde;

import org.apache.kafka.common.errors.SerializationException;

/**
 * Confluent's wire format: a 0 byte, the schema id (4 bytes, big-endian), then the Avro binary body.
 * A single-object record starts with C3 01 instead, so a reader tells the two apart by the first byte.
 */
public final class RegistryFraming {
    private RegistryFraming() {}

    public static final byte MAGIC = 0;
    public static final int PREFIX_BYTES = 5;

    public static byte[] prefix(int id) {
        return new byte[] {MAGIC, (byte) (id >>> 24), (byte) (id >>> 16), (byte) (id >>> 8), (byte) id};
    }

    public static boolean isFramed(byte[] data) {
        return data.length >= PREFIX_BYTES && data[0] == MAGIC;
    }

    public static int id(byte[] data) {
        return (data[1] & 0xFF) << 24 | (data[2] & 0xFF) << 16 | (data[3] & 0xFF) << 8 | (data[4] & 0xFF);
    }

    /** What a reader without a registry says of a framed record. */
    public static SerializationException needsRegistry(String topic, byte[] data) {
        return new SerializationException("a " + topic + " value in Confluent's wire format (schema id " + id(data)
                + "): read it with --schema-registry URL");
    }
}
