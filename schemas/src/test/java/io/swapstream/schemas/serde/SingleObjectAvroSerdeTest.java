package io.swapstream.schemas.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.swapstream.schemas.avro.ContextSwitch;
import io.swapstream.schemas.avro.ThreadInfo;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class SingleObjectAvroSerdeTest {

    static ContextSwitch sample() {
        return ContextSwitch.newBuilder().setSession("h:L:1").setHost("h").setCpu(3).setTimestamp(10).setTimeNanos(20)
                .setSource("COMPACT").setOldThreadId(100).setOldThreadPriority(9).setOldThreadState("Waiting")
                .setOldThreadWaitReason("WrQueue").setNewThreadId(null).setNewThreadWaitTicks(1L)
                .setPmcCounters(List.of(1L, 2L)).build();
    }

    @Test
    void roundTripsWithNulls() {
        SingleObjectAvroSerde<ContextSwitch> serde = new SingleObjectAvroSerde<>(ContextSwitch.class);
        byte[] b = serde.serialize("t", sample());
        assertEquals((byte) 0xC3, b[0], "single-object marker C3 01");
        assertEquals((byte) 0x01, b[1]);
        ContextSwitch back = serde.deserialize("t", b);
        assertEquals(sample(), back);
        assertNull(back.getNewThreadId());
    }

    @Test
    void factoryIsPluggable() {
        assertEquals(SingleObjectSerdeFactory.class, RecordSerdeFactory.from(Map.of()).getClass());
        assertThrows(IllegalArgumentException.class,
                () -> RecordSerdeFactory.from(Map.of("swapstream.serde.factory", "no.such.Factory")));
    }

    @Test
    void garbageIsASerializationError() {
        SingleObjectAvroSerde<ContextSwitch> serde = new SingleObjectAvroSerde<>(ContextSwitch.class);
        assertThrows(SerializationException.class, () -> serde.deserialize("t", new byte[] {1, 2, 3}));
    }

    /** A reader of the next schema version reads records written with this one, filling defaults. */
    @Test
    void nextVersionReadsThisVersion() throws Exception {
        ThreadInfo v1 = ThreadInfo.newBuilder().setSession("s").setThreadId(8).setProcessId(4).setProcessName("a.exe")
                .setThreadName(null).setBasePriority(8).setStartNanos(null).setEndNanos(5L).build();
        byte[] bytes = new SingleObjectAvroSerde<>(ThreadInfo.class).serialize("t", v1);
        Schema next;
        try (InputStream in = getClass().getResourceAsStream("/next/ThreadInfoNext.avsc")) {
            next = new Schema.Parser().parse(in);
        }
        BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), next);
        reader.addSchema(ThreadInfo.getClassSchema());
        GenericRecord r = reader.decode(bytes);
        assertEquals("a.exe", r.get("processName").toString());
        assertEquals(5L, r.get("endNanos"));
        assertNull(r.get("cpuSet"));
        assertEquals("Normal", r.get("priorityClass").toString());
    }
}
