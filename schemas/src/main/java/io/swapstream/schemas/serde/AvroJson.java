package io.swapstream.schemas.serde;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * An Avro record as one line of plain JSON: field names and order of the schema, null as null,
 * unions as their value, enums as their symbol. (Avro's own JSON encoding wraps every union value in
 * an object naming its branch, which no JSON-lines reader expects.)
 */
public final class AvroJson {
    private AvroJson() {}

    public static String toJson(GenericRecord r) {
        StringBuilder b = new StringBuilder(512);
        write(b, r, r.getSchema());
        return b.toString();
    }

    public static void write(StringBuilder b, Object v, Schema s) {
        switch (s.getType()) {
            case RECORD -> {
                GenericRecord r = (GenericRecord) v;
                b.append('{');
                boolean first = true;
                for (Schema.Field f : s.getFields()) {
                    if (!first) b.append(',');
                    first = false;
                    string(b, f.name());
                    b.append(':');
                    write(b, r.get(f.pos()), f.schema());
                }
                b.append('}');
            }
            case UNION -> {
                if (v == null) b.append("null");
                else write(b, v, s.getTypes().get(GenericData.get().resolveUnion(s, v)));
            }
            case ARRAY -> {
                b.append('[');
                boolean first = true;
                for (Object x : (Collection<?>) v) {
                    if (!first) b.append(',');
                    first = false;
                    write(b, x, s.getElementType());
                }
                b.append(']');
            }
            case MAP -> {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    string(b, e.getKey().toString());
                    b.append(':');
                    write(b, e.getValue(), s.getValueType());
                }
                b.append('}');
            }
            case STRING, ENUM -> string(b, v.toString());
            case FLOAT, DOUBLE -> {
                double d = ((Number) v).doubleValue();
                if (Double.isFinite(d)) b.append(d);
                else b.append("null");
            }
            case INT, LONG, BOOLEAN -> b.append(v);
            case NULL -> b.append("null");
            case BYTES -> {
                ByteBuffer bb = ((ByteBuffer) v).duplicate();
                byte[] bytes = new byte[bb.remaining()];
                bb.get(bytes);
                string(b, Base64.getEncoder().encodeToString(bytes));
            }
            case FIXED -> string(b, Base64.getEncoder().encodeToString(((GenericData.Fixed) v).bytes()));
        }
    }

    /** A JSON string with the escapes RFC 8259 requires. */
    public static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        b.append('"');
    }
}
