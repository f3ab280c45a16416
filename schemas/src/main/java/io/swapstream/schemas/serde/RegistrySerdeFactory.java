package io.swapstream.schemas.serde;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/** Confluent's wire format through the schema registry of {@code schema.registry.url}. */
public final class RegistrySerdeFactory implements RecordSerdeFactory {
    @Override
    public <T extends SpecificRecord> Serde<T> serde(Class<T> type, Map<String, ?> config) {
        SchemaRegistry registry = SchemaRegistry.of(config);
        if (registry == null) throw new IllegalArgumentException("no schema.registry.url in the configuration");
        return new RegistryAvroSerde<>(type, registry);
    }
}
