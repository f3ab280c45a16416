package io.swapstream.schemas.serde;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    /**
     * The records that gained fields since the last release (0.1.0), and which of their versions that release wrote.
     * Updated when a release is cut: a type whose schema the release writes as it is leaves the map.
     */
    private static final Map<String, Integer> LAST_RELEASE_VERSION = Map.of("ThreadStats", 4);

    /** The schema the last release wrote of {@code type}, when this build added fields to it since; else null. */
    public static Schema lastRelease(Class<?> type) {
        Integer v = LAST_RELEASE_VERSION.get(type.getSimpleName());
        return v == null ? null : earlier(type).get(v - 1);
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
