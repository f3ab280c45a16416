package io.swapstream.schemas.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificRecord;

/**
 * What the last release wrote of a record that has gained fields since ({@link SchemaHistory#lastRelease}): its
 * single-object header, and the fields added after its own, with their defaults. A record whose added fields all hold
 * their defaults is, in Avro binary, the release's record followed by those defaults' encoding, so the writer drops
 * that tail and writes the release's header: byte for byte what the release wrote, which its instances read during a
 * rolling upgrade or after going back (docs/upgrading.md). A record that uses an added field is written in this
 * build's schema, which the release cannot read.
 */
final class ReleasedSchema {
    /** C3 01 and the release's schema fingerprint, little-endian. */
    final byte[] header;
    /** The added fields' positions in the record, and their defaults. */
    private final int[] added;
    private final Object[] defaults;
    /** The added fields' defaults in Avro binary: the tail a record holding them ends with. */
    private final byte[] tail;

    private ReleasedSchema(byte[] header, int[] added, Object[] defaults, byte[] tail) {
        this.header = header;
        this.added = added;
        this.defaults = defaults;
        this.tail = tail;
    }

    /** For {@code type}, whose schema is {@code current}: null when the last release wrote its schema as it is. */
    static ReleasedSchema of(Class<?> type, Schema current) {
        Schema released = SchemaHistory.lastRelease(type);
        if (released == null) return null;
        List<Schema.Field> then = released.getFields();
        List<Schema.Field> now = current.getFields();
        for (int i = 0; i < then.size(); i++) {
            if (i >= now.size() || !then.get(i).name().equals(now.get(i).name())) {
                throw new IllegalStateException(type.getSimpleName() + ": fields are only appended after the release's, and "
                        + then.get(i).name() + " is not at " + i);
            }
        }
        int n = now.size() - then.size();
        int[] added = new int[n];
        Object[] defaults = new Object[n];
        ByteArrayOutputStream tail = new ByteArrayOutputStream();
        BinaryEncoder e = EncoderFactory.get().binaryEncoder(tail, null);
        try {
            for (int i = 0; i < n; i++) {
                Schema.Field f = now.get(then.size() + i);
                if (!f.hasDefaultValue()) throw new IllegalStateException(type.getSimpleName() + "." + f.name() + " was added without a default");
                added[i] = f.pos();
                defaults[i] = GenericData.get().getDefaultValue(f);
                new GenericDatumWriter<>(f.schema(), GenericData.get()).write(defaults[i], e);
            }
            e.flush();
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
        byte[] header = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
                .putLong(SchemaNormalization.parsingFingerprint64(released)).array();
        return new ReleasedSchema(header, added, defaults, tail.toByteArray());
    }

    /** Whether every field added since the release holds its default in {@code data}. */
    boolean holds(SpecificRecord data) {
        for (int i = 0; i < added.length; i++) if (!isDefault(data.get(added[i]), defaults[i])) return false;
        return true;
    }

    /** Bytes of the added fields' defaults at the end of a record that {@link #holds} them. */
    int tailLength() {
        return tail.length;
    }

    /** Whether {@code bytes[0, count)} ends with the added fields' defaults. */
    boolean endsWithTail(byte[] bytes, int count) {
        if (count < tail.length) return false;
        for (int i = 0; i < tail.length; i++) if (bytes[count - tail.length + i] != tail[i]) return false;
        return true;
    }

    private static boolean isDefault(Object value, Object d) {
        if (d == null || value == null) return value == d;
        if (d instanceof CharSequence) return value instanceof CharSequence && value.toString().contentEquals((CharSequence) d);
        if (d instanceof Collection<?> c) return value instanceof Collection<?> v && c.isEmpty() && v.isEmpty();
        if (d instanceof Map<?, ?> m) return value instanceof Map<?, ?> v && m.isEmpty() && v.isEmpty();
        return Objects.equals(value, d);
    }
}
