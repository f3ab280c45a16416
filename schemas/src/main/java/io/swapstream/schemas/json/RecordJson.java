package io.swapstream.schemas.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The one way the project turns records into JSON, for the API, {@code tail}, the offline commands
 * and the pages: Jackson, with an Avro record written as plain JSON (the schema's field names and
 * order, null as null, a union as its value, an enum as its symbol, bytes as base64). Avro's own JSON
 * encoding wraps every union value in an object naming its branch, which no JSON-lines reader expects.
 */
public final class RecordJson {
    private RecordJson() {}

    /** The project's mapper: for trees the API builds and reads. */
    public static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonFactory FACTORY = MAPPER.getFactory();

    /** Writes JSON into {@code w}; the caller flushes or closes it. */
    public interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    /** What {@code body} writes, as a string. */
    public static String toJson(Body body) {
        StringWriter w = new StringWriter(256);
        try (JsonGenerator g = FACTORY.createGenerator(w)) {
            g.setRootValueSeparator(null); // values in a row are lines: the caller writes the newline
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /** A generator over {@code w} (not closing it), for many values in a row. */
    public static JsonGenerator generator(Writer w) {
        try {
            JsonGenerator g = FACTORY.createGenerator(w).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            g.setRootValueSeparator(null); // values in a row are lines: the caller writes the newline
            return g;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An Avro record as one line of JSON. */
    public static String toJson(GenericRecord r) {
        return toJson(g -> write(g, r, r.getSchema()));
    }

    /** An Avro record as a tree, for an answer that adds to it. */
    public static ObjectNode toTree(GenericRecord r) {
        try {
            return (ObjectNode) MAPPER.readTree(toJson(r));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code v}, of schema {@code s}, as JSON. */
    public static void write(JsonGenerator g, Object v, Schema s) throws IOException {
        switch (s.getType()) {
            case RECORD -> {
                GenericRecord r = (GenericRecord) v;
                g.writeStartObject();
                for (Schema.Field f : s.getFields()) {
                    g.writeFieldName(f.name());
                    write(g, r.get(f.pos()), f.schema());
                }
                g.writeEndObject();
            }
            case UNION -> {
                if (v == null) g.writeNull();
                else write(g, v, s.getTypes().get(GenericData.get().resolveUnion(s, v)));
            }
            case ARRAY -> {
                g.writeStartArray();
                for (Object x : (Collection<?>) v) write(g, x, s.getElementType());
                g.writeEndArray();
            }
            case MAP -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    g.writeFieldName(e.getKey().toString());
                    write(g, e.getValue(), s.getValueType());
                }
                g.writeEndObject();
            }
            case STRING, ENUM -> g.writeString(v.toString());
            case FLOAT, DOUBLE -> {
                double d = ((Number) v).doubleValue();
                if (Double.isFinite(d)) g.writeNumber(d);
                else g.writeNull();
            }
            case INT -> g.writeNumber((Integer) v);
            case LONG -> g.writeNumber((Long) v);
            case BOOLEAN -> g.writeBoolean((Boolean) v);
            case NULL -> g.writeNull();
            case BYTES -> {
                ByteBuffer bb = ((ByteBuffer) v).duplicate();
                byte[] bytes = new byte[bb.remaining()];
                bb.get(bytes);
                g.writeString(Base64.getEncoder().encodeToString(bytes));
            }
            case FIXED -> g.writeString(Base64.getEncoder().encodeToString(((GenericData.Fixed) v).bytes()));
        }
    }

    /** A nullable number. */
    public static void number(JsonGenerator g, Long v) throws IOException {
        if (v == null) g.writeNull();
        else g.writeNumber(v);
    }

    public static void number(JsonGenerator g, Integer v) throws IOException {
        if (v == null) g.writeNull();
        else g.writeNumber(v);
    }
}
