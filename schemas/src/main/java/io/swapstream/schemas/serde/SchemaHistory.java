package io.swapstream.schemas.serde;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/**
 * The earlier versions of a record's schema, kept as resources
 * ({@code io/swapstream/schemas/avro-history/NAME.vN.avsc}, N from 1), so that readers resolve
 * records written before a field was added.
 */
public final class SchemaHistory {
    private SchemaHistory() {}

    /** Read once per class: a serde is made per topology and per client. */
    private static final ClassValue<List<Schema>> EARLIER = new ClassValue<>() {
        @Override
        protected List<Schema> computeValue(Class<?> type) {
            return List.copyOf(read(type));
        }
    };

    public static List<Schema> earlier(Class<?> type) {
        return EARLIER.get(type);
    }

    /** Every version of a generated record's schema, the first to the current. */
    public static List<Schema> all(Class<?> type) {
        List<Schema> out = new ArrayList<>(earlier(type));
        out.add(org.apache.avro.specific.SpecificData.get().getSchema(type));
        return out;
    }

    private static List<Schema> read(Class<?> type) {
        List<Schema> out = new ArrayList<>();
        for (int v = 1; ; v++) {
            String name = "/io/swapstream/schemas/avro-history/" + type.getSimpleName() + ".v" + v + ".avsc";
            try (InputStream in = SchemaHistory.class.getResourceAsStream(name)) {
                if (in == null) return out;
                // each file holds every type it uses: it loads alone, here and in any reader
                out.add(new Schema.Parser().parse(in));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
