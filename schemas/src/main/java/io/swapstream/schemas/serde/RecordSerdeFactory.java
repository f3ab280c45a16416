package io.swapstream.schemas.serde;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/**
 * Makes the value serdes of the Avro topics: Avro single-object encoding by default, Confluent's wire
 * format through a registry where {@code schema.registry.url} is set, or another factory named in
 * {@code swapstream.serde.factory}.
 */
public interface RecordSerdeFactory {
    <T extends SpecificRecord> Serde<T> serde(Class<T> type, Map<String, ?> config);

    /** The factory named in the configuration, else the registry's, else single-object encoding. */
    static RecordSerdeFactory from(Map<String, ?> config) {
        Object name = config.get(io.swapstream.schemas.SwapstreamConfig.SERDE_FACTORY);
        if (name == null || name.toString().isBlank()) {
            return SchemaRegistry.of(config) != null ? new RegistrySerdeFactory() : new SingleObjectSerdeFactory();
        }
        try {
            return (RecordSerdeFactory) Class.forName(name.toString()).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException(io.swapstream.schemas.SwapstreamConfig.SERDE_FACTORY + ": cannot use '"
                    + name + "': " + e);
        }
    }
}
