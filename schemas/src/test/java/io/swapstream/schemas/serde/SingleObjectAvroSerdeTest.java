package io.swapstream.schemas.serde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
    void roundTripsWithNulls() throws Exception {
        SingleObjectAvroSerde<ContextSwitch> serde = new SingleObjectAvroSerde<>(ContextSwitch.class);
        byte[] b = serde.serialize("t", sample());
        assertEquals((byte) 0xC3, b[0], "single-object marker C3 01");
        assertEquals((byte) 0x01, b[1]);
        ContextSwitch back = serde.deserialize("t", b);
        assertEquals(sample(), back);
        assertNull(back.getNewThreadId());
        // the same bytes as Avro's own single-object encoder, whatever the thread wrote before
        assertArrayEquals(ContextSwitch.getEncoder().encode(sample()).array(), serde.serialize("t", sample()));
    }

    /** A record written under the first schema, before ready time: it reads, the ready fields at their defaults. */
    @Test
    void recordsOfTheFirstSchemaStillRead() throws Exception {
        Schema v1 = SchemaHistory.earlier(io.swapstream.schemas.avro.ThreadStats.class).get(0);
        GenericRecord old = threadStats(v1, false);
        byte[] bytes = new org.apache.avro.message.BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();
        io.swapstream.schemas.avro.ThreadStats back =
                new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ThreadStats.class).deserialize("t", bytes);
        assertEquals(7L, back.getWaitCount());
        assertEquals(0L, back.getReadyCount());
        assertNull(back.getReadyP99Nanos());
        assertEquals(Map.of(), back.getTopReadiers());
        assertEquals(true, back.getFinal$());

        Schema cs1 = SchemaHistory.earlier(ContextSwitch.class).get(0);
        GenericRecord oldSwitch = new GenericData.Record(cs1);
        for (Schema.Field f : cs1.getFields()) oldSwitch.put(f.name(), sample().get(f.name()));
        ContextSwitch sw = new SingleObjectAvroSerde<>(ContextSwitch.class).deserialize("t",
                new org.apache.avro.message.BinaryMessageEncoder<GenericRecord>(GenericData.get(), cs1).encode(oldSwitch).array());
        assertEquals(sample(), sw);
    }

    /**
     * A ThreadStats row whose field added since release 0.1.0 ({@code complete}) holds its default is written as 0.1.0
     * wrote it, fingerprint and bytes, so a 0.1.0 instance reads it during a rolling upgrade; a row marked incomplete is
     * written in this build's schema, which 0.1.0 cannot read, and reads back marked.
     */
    @Test
    void aRowWhoseAddedFieldsHoldTheirDefaultsIsWrittenAsTheReleaseWroteIt() throws Exception {
        Schema release010 = SchemaHistory.lastRelease(io.swapstream.schemas.avro.ThreadStats.class);
        GenericRecord old = threadStats(release010, true);
        byte[] written = new org.apache.avro.message.BinaryMessageEncoder<GenericRecord>(GenericData.get(), release010).encode(old).array();
        SingleObjectAvroSerde<io.swapstream.schemas.avro.ThreadStats> serde = new SingleObjectAvroSerde<>(io.swapstream.schemas.avro.ThreadStats.class);
        io.swapstream.schemas.avro.ThreadStats row = serde.deserialize("t", written);
        assertEquals(true, row.getComplete(), "0.1.0's rows read as complete");
        assertArrayEquals(written, serde.serialize("t", row), "written as 0.1.0 wrote it");
        BinaryMessageDecoder<GenericRecord> reader010 = new BinaryMessageDecoder<>(GenericData.get(), release010);
        assertEquals(7L, reader010.decode(serde.serialize("t", row)).get("waitCount"));
        row.setComplete(false);
        byte[] marked = serde.serialize("t", row);
        assertEquals(written.length + 1, marked.length);
        assertThrows(Exception.class, () -> reader010.decode(marked), "0.1.0 reads no row it would take as complete");
        assertEquals(false, serde.deserialize("t", marked).getComplete());
        // a schema registry's readers fetch the writer's schema by its id: the registry's format writes this build's
        assertEquals(false, serde.deserialize("t", serde.encode(
                java.nio.ByteBuffer.allocate(10).order(java.nio.ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
                        .putLong(org.apache.avro.SchemaNormalization.parsingFingerprint64(
                                io.swapstream.schemas.avro.ThreadStats.getClassSchema())).array(), row)).getComplete());
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

    /**
     * A ThreadStats record of an earlier {@code schema}, as a build of it wrote one: 7 in every number; with
     * {@code defaults}, each field that has a default holds it and every other map is empty.
     */
    private static GenericRecord threadStats(Schema schema, boolean defaults) {
        GenericRecord r = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            Schema.Type type = f.schema().getType();
            r.put(f.name(), switch (f.name()) {
                case "session" -> "h:L:1";
                case "host" -> "h";
                case "waitReasonCounts" -> Map.of("WrQueue", 3L);
                case "priorityHistogram" -> java.util.Collections.nCopies(32, 0L);
                case "final" -> true;
                default -> defaults && f.hasDefaultValue() ? GenericData.get().getDefaultValue(f)
                        : type == Schema.Type.LONG ? (Object) 7L
                        : type == Schema.Type.INT ? (Object) 7
                        : defaults && type == Schema.Type.MAP ? Map.of() : null;
            });
        }
        return r;
    }
}
