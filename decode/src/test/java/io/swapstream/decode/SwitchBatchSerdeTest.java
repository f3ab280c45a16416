package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The column-by-column serde writes exactly what Avro's generated class writes, and reads what it reads. */
class SwitchBatchSerdeTest {
    @TempDir Path dir;

    List<SwitchBatch> batches(String mode, int pmc) throws Exception {
        Path f = dir.resolve(mode + ".etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withMode(mode).withPmc(pmc).withSwitches(10_000), 0x28);
        List<SwitchBatch> out = new ArrayList<>();
        SwitchBatchSerde copy = new SwitchBatchSerde();
        SessionDecoder.decodeBatches(f, "h", null, b -> out.add(copy.deserialize("t", copy.serialize("t", b))), null);
        return out;
    }

    @Test
    void sameBytesAsTheGeneratedClassBothWays() throws Exception {
        SwitchBatchSerde fast = new SwitchBatchSerde();
        SingleObjectAvroSerde<ContextSwitchBatch> avro = new SingleObjectAvroSerde<>(ContextSwitchBatch.class);
        int rows = 0;
        List<SwitchBatch> all = new ArrayList<>(batches("cswitch", 3));
        all.addAll(batches("compact", 0));
        for (SwitchBatch b : all) {
            byte[] ours = fast.serialize("t", b);
            ContextSwitchBatch generated = avro.deserialize("t", ours);
            assertEquals(b.rows(), SwitchBatchSerde.fromAvro(generated).rows());
            byte[] theirs = avro.serialize("t", SwitchBatchSerde.toAvro(b));
            assertArrayEquals(theirs, ours);
            assertEquals(b.rows(), fast.deserialize("t", theirs).rows());
            rows += b.count();
        }
        assertTrue(rows >= 20_000, rows + " rows");
    }

    @Test
    void valuesPastTheEnumTablesTravelAsUnknown() {
        SwitchBatch b = new SwitchBatch(16).reset("s", "h");
        b.add(0, 1, 2, SwitchBatch.SOURCE_CSWITCH, 100, 9, 17, 77, 1, 0, SwitchBatch.NONE, 0, null, SwitchBatch.NO_TIME, 5, SwitchBatch.NO_TIME, SwitchBatch.NO_TIME, SwitchBatch.NONE, SwitchBatch.NONE);
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SwitchBatch back = serde.deserialize("t", serde.serialize("t", b));
        assertEquals(SwitchBatchSerde.UNKNOWN_VALUE, back.oldThreadState(0));
        assertEquals(SwitchBatchSerde.UNKNOWN_VALUE, back.oldThreadWaitReason(0));
        assertEquals(9, back.oldThreadPriority(0));
        // WaitMode has no Unknown symbol: a mode outside the table travels as null
        b.add(0, 3, 4, SwitchBatch.SOURCE_CSWITCH, 100, 9, 5, 6, 7, 0, SwitchBatch.NONE, 0, null, SwitchBatch.NO_TIME, 5, SwitchBatch.NO_TIME, SwitchBatch.NO_TIME, SwitchBatch.NONE, SwitchBatch.NONE);
        back = serde.deserialize("t", serde.serialize("t", b));
        assertEquals(SwitchBatch.NONE, back.oldThreadWaitMode(1));
        assertEquals(5, back.oldThreadState(1));
    }

    /** Avro's blocking encoder writes arrays in blocks with negative counts and byte sizes: the reader takes those too. */
    @Test
    void readsArraysWrittenInSizedBlocks() throws Exception {
        List<SwitchBatch> all = batches("cswitch", 2);
        SwitchBatch b = all.get(0);
        var out = new java.io.ByteArrayOutputStream();
        out.write(new SwitchBatchSerde().serialize("t", b), 0, 10); // the single-object header
        var e = new org.apache.avro.io.EncoderFactory().configureBlockSize(64).blockingBinaryEncoder(out, null);
        new org.apache.avro.specific.SpecificDatumWriter<>(ContextSwitchBatch.class).write(SwitchBatchSerde.toAvro(b), e);
        e.flush();
        byte[] blocked = out.toByteArray();
        assertTrue(blocked.length > new SwitchBatchSerde().serialize("t", b).length, "sized blocks are longer");
        assertEquals(b.rows(), new SwitchBatchSerde().deserialize("t", blocked).rows());
    }

    /** A batch written before ready time existed (the first schema) still reads: the ready columns are null. */
    @Test
    void aBatchOfTheFirstSchemaReadsWithoutReadyTimes() throws Exception {
        org.apache.avro.Schema v1 = io.swapstream.schemas.serde.SchemaHistory.earlier(ContextSwitchBatch.class).get(0);
        SwitchBatch b = batches("cswitch", 2).get(0);
        ContextSwitchBatch now = SwitchBatchSerde.toAvro(b);
        org.apache.avro.generic.GenericRecord old = new org.apache.avro.generic.GenericData.Record(v1);
        for (org.apache.avro.Schema.Field f : v1.getFields()) old.put(f.name(), now.get(f.name()));
        byte[] bytes = new org.apache.avro.message.BinaryMessageEncoder<org.apache.avro.generic.GenericRecord>(
                org.apache.avro.generic.GenericData.get(), v1).encode(old).array();
        SwitchBatch back = new SwitchBatchSerde().deserialize("t", bytes);
        assertEquals(b.count(), back.count());
        for (int i = 0; i < b.count(); i++) {
            ContextSwitch want = b.row(i);
            assertEquals(new ContextSwitch(want.session(), want.host(), want.cpu(), want.timestamp(), want.timeNanos(), want.source(),
                    want.oldThreadId(), want.oldThreadPriority(), want.oldThreadState(), want.oldThreadWaitReason(),
                    want.oldThreadWaitMode(), want.newThreadId(), want.newThreadPriority(), want.newThreadWaitTicks(),
                    want.pmcCounters(), want.newThreadTimeSinceLastNanos(), want.oldThreadRunNanos(), null, null, null, null),
                    back.row(i));
        }
    }

    @Test
    void bytesThatAreNoBatchAreRefusedWithAReason() {
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SwitchBatch b = new SwitchBatch(16).reset("s", "h");
        b.add(0, 1, 2, SwitchBatch.SOURCE_COMPACT, 100, 9, 5, 6, SwitchBatch.NONE, 104, SwitchBatch.NONE, 1, null, 10, 20, 7, 3, 300, 40);
        byte[] good = serde.serialize("t", b);
        assertThrows(SerializationException.class, () -> serde.deserialize("t", new byte[] {1, 2, 3}));
        byte[] cut = Arrays.copyOf(good, good.length - 3);
        SerializationException e = assertThrows(SerializationException.class, () -> serde.deserialize("t", cut));
        assertTrue(e.getMessage().startsWith("cannot decode a t value"), e.getMessage());
    }
}
