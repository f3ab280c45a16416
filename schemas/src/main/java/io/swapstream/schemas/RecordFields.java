package io.swapstream.schemas;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/** What a record's schema says about its fields, for the commands and the API that rank rows. */
public final class RecordFields {
    private RecordFields() {}

    /** The fields a row can be ranked by: the numeric ones, nullable or not, in schema order. */
    public static List<String> numeric(Schema schema) {
        List<String> out = new ArrayList<>();
        for (Schema.Field f : schema.getFields()) {
            Schema s = f.schema();
            if (s.getType() == Schema.Type.UNION) s = s.getTypes().stream().filter(x -> x.getType() != Schema.Type.NULL).findFirst().orElse(s);
            if (s.getType() == Schema.Type.LONG || s.getType() == Schema.Type.INT || s.getType() == Schema.Type.DOUBLE) out.add(f.name());
        }
        return out;
    }
}
