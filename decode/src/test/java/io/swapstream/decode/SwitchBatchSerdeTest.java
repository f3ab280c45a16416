package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.SwitchRow;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.serde.SchemaHistory;
import io.swapstream.schemas.serde.SingleObjectAvroSerde;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
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

    /**
     * Five rows whose encoded columns are worked out by hand (not by the writer's code), read with
     * Avro's generic reader: differences, the dictionary, run lengths, presence bitmaps, and the
     * rows where a derived column differs from its rule.
     */
    @Test
    void encodesEachColumnAsTheSchemaDocSays() throws Exception {
        long base = 1_700_000_000_000_000_000L;
        // 10 MHz: a tick is 100 ns; timestamp 1000 is the base
        SwitchBatch b = new SwitchBatch(16).reset("s", "h").clock(1000, base, 10_000_000L);
        int none = SwitchBatch.NONE;
        long no = SwitchBatch.NO_TIME;
        int compact = SwitchBatch.SOURCE_COMPACT;
        // cpu, ts, nanos, source, old, oldPri, state, reason, mode, new, newPri, ticks, pmc, sinceLast, run, ready, waits, readier, pid,
        // then the CSwitch-only previousCState, rank, decrement, ideal processor, remaining quantum
        b.add(0, 1000, base, compact, 0, none, none, none, none, 100, none, no, null, 5000, no, 2000, 3000, 200, 4, none, none, none, none, none);
        b.add(1, 1010, base + 1000, compact, 200, 9, 5, 15, none, 0, none, no, null, no, 7000, no, no, none, none, none, none, none, none, none);
        b.add(0, 1025, base + 2500, compact, 100, 10, 1, none, none, 200, none, no, null, 1500, 2500, 1500, no, none, none, none, none, none, none, none);
        b.add(1, 1030, base + 3000, SwitchBatch.SOURCE_CSWITCH, 0, none, none, none, none, 100, 11, 3, new long[] {5, 6}, 500, no, no, no, none, none, 2, none, 1, 3, -40);
        b.add(0, 1031, base + 3107, compact, 200, 9, 5, 0, none, 0, none, no, null, no, 607, no, no, none, none, none, none, none, none, none);
        byte[] bytes = new SwitchBatchSerde().serialize("t", b);
        GenericRecord r = new org.apache.avro.message.BinaryMessageDecoder<GenericRecord>(GenericData.get(),
                ContextSwitchBatch.getClassSchema()).decode(bytes);

        assertEquals(List.of(1000L, 10L, 15L, 5L, 1L), r.get("timestampDeltas"));
        // row 4 is 7 ns past what the clock makes of its timestamp
        assertEquals(List.of(4), field(r, "timeNanosExceptions", "rows"));
        assertEquals(List.of(base + 3107), field(r, "timeNanosExceptions", "values"));
        assertEquals("[COMPACT, CSWITCH, COMPACT]", field(r, "sourceRuns", "values").toString());
        assertEquals(List.of(3, 1, 1), field(r, "sourceRuns", "lengths"));
        assertEquals(List.of(0, 100, 200), r.get("threadIds"));
        assertEquals(List.of(0, 2, 1, 0, 2), r.get("oldThreadIdIndexes"));
        assertPresent(r, "oldThreadPriority", 0b10110, List.of(9, 10, 9));
        assertPresent(r, "oldThreadState", 0b10110, "[Waiting, Ready, Waiting]");
        assertPresent(r, "oldThreadWaitReason", 0b10010, "[WrQueue, Executive]");
        assertEquals(0, ((java.nio.ByteBuffer) field(r, "oldThreadWaitMode", "present")).remaining(), "no row has a mode");
        assertPresent(r, "newThreadIdIndexes", 0b11111, List.of(1, 0, 2, 1, 0));
        assertPresent(r, "newThreadPriority", 0b01000, List.of(11));
        assertPresent(r, "newThreadWaitTicks", 0b01000, List.of(3L));
        assertPresent(r, "pmcCounters", 0b01000, List.of(List.of(5L, 6L)));
        // row 0's thread was switched out before the batch; rows 2 and 3 are 1500 and 500 ns after their threads' switch-outs
        assertEquals(List.of(0), field(r, "newThreadTimeSinceLastNanosExceptions", "rows"));
        assertEquals(List.of(5000L), field(r, "newThreadTimeSinceLastNanosExceptions", "values"));
        // row 1 is the batch's first on processor 1; rows 2 and 4 are 2500 and 607 ns after processor 0's row before
        assertEquals(List.of(1), field(r, "oldThreadRunNanosExceptions", "rows"));
        assertEquals(List.of(7000L), field(r, "oldThreadRunNanosExceptions", "values"));
        assertPresent(r, "newThreadReadyNanos", 0b00101, List.of(2000L, 1500L));
        // row 0: 5000 - 2000 = 3000 as the rule says; row 2 would be 1500 - 1500 = 0 but has none
        assertEquals(List.of(2), field(r, "newThreadWaitsNanosExceptions", "rows"));
        assertEquals(java.util.Collections.singletonList(null), field(r, "newThreadWaitsNanosExceptions", "values"));
        assertPresent(r, "readyingThreadIdIndexes", 0b00001, List.of(2));
        assertPresent(r, "readyingProcessId", 0b00001, List.of(4));
        // row 3 is the CSwitch row, from the idle thread: a C-state, no rank
        assertPresent(r, "previousCState", 0b01000, List.of(2));
        assertEquals(0, ((java.nio.ByteBuffer) field(r, "oldThreadRank", "present")).remaining(), "no row has a rank");
        assertPresent(r, "newThreadPriorityDecrement", 0b01000, List.of(1));
        assertPresent(r, "oldThreadIdealProcessor", 0b01000, List.of(3));
        assertPresent(r, "oldThreadRemainingQuantum", 0b01000, List.of(-40));

        assertEquals(b.rows(), new SwitchBatchSerde().deserialize("t", bytes).rows());
    }

    private static Object field(GenericRecord r, String column, String part) {
        return ((GenericRecord) r.get(column)).get(part);
    }

    private static void assertPresent(GenericRecord r, String column, int bits, Object values) {
        java.nio.ByteBuffer present = (java.nio.ByteBuffer) field(r, column, "present");
        assertEquals(1, present.remaining(), column + ": one byte for five rows");
        assertEquals(bits, present.get(present.position()) & 0xFF, column);
        Object got = field(r, column, "values");
        assertEquals(values, values instanceof String ? got.toString() : got, column);
    }

    @Test
    void valuesPastTheEnumTablesTravelAsUnknown() {
        SwitchBatch b = new SwitchBatch(16).reset("s", "h");
        b.add(0, 1, 2, SwitchBatch.SOURCE_CSWITCH, 100, 9, 17, 77, 1, 0, SwitchBatch.NONE, 0, null, SwitchBatch.NO_TIME, 5, SwitchBatch.NO_TIME, SwitchBatch.NO_TIME, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE);
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SwitchBatch back = serde.deserialize("t", serde.serialize("t", b));
        assertEquals(SwitchBatchSerde.UNKNOWN_VALUE, back.oldThreadState(0));
        assertEquals(SwitchBatchSerde.UNKNOWN_VALUE, back.oldThreadWaitReason(0));
        assertEquals(9, back.oldThreadPriority(0));
        // WaitMode has no Unknown symbol: a mode outside the table travels as null
        b.add(0, 3, 4, SwitchBatch.SOURCE_CSWITCH, 100, 9, 5, 6, 7, 0, SwitchBatch.NONE, 0, null, SwitchBatch.NO_TIME, 5, SwitchBatch.NO_TIME, SwitchBatch.NO_TIME, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE);
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

    /** A batch of the row-per-cell schemas, as a generic record (what the earlier versions wrote). */
    private static GenericRecord rowCells(Schema schema, SwitchBatch b) {
        GenericRecord r = new GenericData.Record(schema);
        r.put("session", b.session());
        r.put("host", b.host());
        r.put("count", b.count());
        for (Schema.Field f : schema.getFields()) {
            if (f.schema().getType() != Schema.Type.ARRAY || f.name().equals("threads")) continue;
            List<Object> column = new ArrayList<>();
            for (SwitchRow row : b.rows()) {
                Object v = io.swapstream.batch.AvroRecords.of(row).get(f.name());
                Schema item = f.schema().getElementType();
                Schema enumType = item.getType() == Schema.Type.ENUM ? item
                        : item.getType() == Schema.Type.UNION && item.getTypes().get(1).getType() == Schema.Type.ENUM ? item.getTypes().get(1) : null;
                column.add(v == null || enumType == null ? v : new GenericData.EnumSymbol(enumType, v.toString()));
            }
            r.put(f.name(), column);
        }
        r.put("threads", new ArrayList<>());
        return r;
    }

    private static byte[] encode(Schema schema, GenericRecord r) throws Exception {
        return new BinaryMessageEncoder<GenericRecord>(GenericData.get(), schema).encode(r).array();
    }

    /** Batches written by the two earlier schemas (a union per cell) still read; the first has no ready times. */
    @Test
    void batchesOfTheEarlierSchemasStillRead() throws Exception {
        List<Schema> earlier = SchemaHistory.earlier(ContextSwitchBatch.class);
        SwitchBatch b = batches("cswitch", 2).get(0);
        SwitchBatch v2 = new SwitchBatchSerde().deserialize("t", encode(earlier.get(1), rowCells(earlier.get(1), b)));
        assertEquals(b.rows().stream().map(SwitchBatchSerdeTest::withoutDetail).toList(), v2.rows());
        SwitchBatch v1 = new SwitchBatchSerde().deserialize("t", encode(earlier.get(0), rowCells(earlier.get(0), b)));
        assertEquals(b.count(), v1.count());
        for (int i = 0; i < b.count(); i++) {
            SwitchRow want = b.row(i);
            assertEquals(new SwitchRow(want.session(), want.host(), want.cpu(), want.timestamp(), want.timeNanos(), want.source(),
                    want.oldThreadId(), want.oldThreadPriority(), want.oldThreadState(), want.oldThreadWaitReason(),
                    want.oldThreadWaitMode(), want.newThreadId(), want.newThreadPriority(), want.newThreadWaitTicks(),
                    want.pmcCounters(), want.newThreadTimeSinceLastNanos(), want.oldThreadRunNanos(), null, null, null, null,
                    null, null, null, null, null), v1.row(i));
        }
    }

    /** A batch of the third schema (columns stored for size, before the CSwitch-only ones) reads with those columns null. */
    @Test
    void batchesOfTheThirdSchemaReadWithoutTheCSwitchDetail() throws Exception {
        Schema v3 = SchemaHistory.earlier(ContextSwitchBatch.class).get(2);
        SwitchBatch b = batches("cswitch", 2).get(0);
        assertTrue(b.rows().stream().anyMatch(r -> r.previousCState() != null), "the generated batch has C-states");
        byte[] current = new SwitchBatchSerde().serialize("t", b);
        var decoder = new org.apache.avro.message.BinaryMessageDecoder<GenericRecord>(GenericData.get(), v3);
        decoder.addSchema(ContextSwitchBatch.getClassSchema());
        GenericRecord old = decoder.decode(current);
        SwitchBatch back = new SwitchBatchSerde().deserialize("t", encode(v3, old));
        List<SwitchRow> want = new ArrayList<>();
        for (SwitchRow w : b.rows()) want.add(withoutDetail(w));
        assertEquals(want, back.rows());
    }

    static SwitchRow withoutDetail(SwitchRow w) {
        return new SwitchRow(w.session(), w.host(), w.cpu(), w.timestamp(), w.timeNanos(), w.source(), w.oldThreadId(),
                w.oldThreadPriority(), w.oldThreadState(), w.oldThreadWaitReason(), w.oldThreadWaitMode(), w.newThreadId(),
                w.newThreadPriority(), w.newThreadWaitTicks(), w.pmcCounters(), w.newThreadTimeSinceLastNanos(),
                w.oldThreadRunNanos(), w.newThreadReadyNanos(), w.newThreadWaitsNanos(), w.readyingThreadId(),
                w.readyingProcessId(), null, null, null, null, null);
    }

    /** Corrupt bytes decode to some batch or fail as a SerializationException: never another exception, never a huge allocation. */
    @Test
    void corruptBatchesFailWithASerializationException() throws Exception {
        byte[] good = new SwitchBatchSerde().serialize("t", batches("cswitch", 2).get(0));
        java.util.SplittableRandom random = new java.util.SplittableRandom(36);
        SwitchBatchSerde serde = new SwitchBatchSerde();
        int refused = 0;
        for (int k = 0; k < 600; k++) {
            byte[] bad = good.clone();
            for (int j = 1 + random.nextInt(4); j > 0; j--) bad[10 + random.nextInt(bad.length - 10)] = (byte) random.nextInt(256);
            try {
                serde.deserialize("t", bad, new SwitchBatch(16));
            } catch (SerializationException e) {
                refused++;
            }
        }
        assertTrue(refused > 20, refused + " of 600 refused");
    }

    @Test
    void bytesThatAreNoBatchAreRefusedWithAReason() {
        SwitchBatchSerde serde = new SwitchBatchSerde();
        SwitchBatch b = new SwitchBatch(16).reset("s", "h");
        b.add(0, 1, 2, SwitchBatch.SOURCE_COMPACT, 100, 9, 5, 6, SwitchBatch.NONE, 104, SwitchBatch.NONE, 1, null, 10, 20, 7, 3, 300, 40, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE, SwitchBatch.NONE);
        byte[] good = serde.serialize("t", b);
        assertThrows(SerializationException.class, () -> serde.deserialize("t", new byte[] {1, 2, 3}));
        byte[] cut = Arrays.copyOf(good, good.length - 3);
        SerializationException e = assertThrows(SerializationException.class, () -> serde.deserialize("t", cut));
        assertTrue(e.getMessage().startsWith("cannot decode a t value"), e.getMessage());
    }
}
