package io.swapstream.schemas.serde;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/** Avro single-object encoding: no registry, the schema fingerprint travels in each value. */
public final class SingleObjectSerdeFactory implements RecordSerdeFactory {
    @Override
    public <T extends SpecificRecord> Serde<T> serde(Class<T> type, Map<String, ?> config) {
        return new SingleObjectAvroSerde<>(type);
    }
}
