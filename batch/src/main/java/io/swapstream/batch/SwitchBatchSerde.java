package io.swapstream.batch;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.schemas.serde.RegistryFraming;
import io.swapstream.schemas.serde.SchemaHistory;
import io.swapstream.schemas.serde.SchemaRegistry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * {@link SwitchBatch} as an Avro {@code ContextSwitchBatch} in single-object encoding, written and
 * read column by column ({@link ColumnarBatchWriter}, {@link ColumnarBatchReader}, on
 * {@link AvroBinaryWriter} and {@link AvroBinaryReader}): the bytes Avro's generated class makes
 * of the same record, without an object or a boxed value per switch. Batches of the three earlier schemas still read.
 * Hand-written because Avro has no primitive-array reader or writer.
 */
public final class SwitchBatchSerde implements Serde<SwitchBatch>, Serializer<SwitchBatch>, Deserializer<SwitchBatch> {
    private static final byte[] HEADER = header(ContextSwitchBatch.getClassSchema());
    private static final long FINGERPRINT = SchemaNormalization.parsingFingerprint64(ContextSwitchBatch.getClassSchema());
    /** Batches written before ready time existed: the row-per-cell columns without the last four. */
    private static final long FINGERPRINT_V1 = SchemaNormalization.parsingFingerprint64(SchemaHistory.earlier(ContextSwitchBatch.class).get(0));
    /** Batches written before the columns were stored for size: a union per cell. */
    private static final long FINGERPRINT_V2 = SchemaNormalization.parsingFingerprint64(SchemaHistory.earlier(ContextSwitchBatch.class).get(1));
    /** Batches written before the CSwitch-only columns (previousCState and the rest). */
    private static final long FINGERPRINT_V3 = SchemaNormalization.parsingFingerprint64(SchemaHistory.earlier(ContextSwitchBatch.class).get(2));
    /** A single-object header's fingerprint, read in place. */
    private static final java.lang.invoke.VarHandle LONG_LE = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    /** What an Unknown enum symbol reads back as: outside every table. */
    public static final int UNKNOWN_VALUE = ColumnarBatchWriter.UNKNOWN_VALUE;
    private static final int STATES = ColumnarBatchWriter.STATES;
    private static final int REASONS = ColumnarBatchWriter.REASONS;
    private static final int MODES = ColumnarBatchWriter.MODES;
    private static final int SOURCES = ColumnarBatchWriter.SOURCES;

    /** The conversions' serde: its buffers are per thread, so one serves every caller. */
    private static final SwitchBatchSerde SHARED = new SwitchBatchSerde();

    /**
     * Buffers of the thread at work: Kafka Streams shares one serde between the tasks and threads of
     * a topology.
     */
    private final ThreadLocal<ColumnarBatchWriter> writer = ThreadLocal.withInitial(ColumnarBatchWriter::new);
    private final ThreadLocal<ColumnarBatchReader> reader = ThreadLocal.withInitial(ColumnarBatchReader::new);

    /** Where batches are written in Confluent's wire format; null for single-object encoding. */
    private final SchemaRegistry registry;
    /** The prefix of each topic written: its value subject's id. */
    private final Map<String, byte[]> prefixes = new ConcurrentHashMap<>();
    /** The schema fingerprint of each id read. */
    private final Map<Integer, Long> fingerprints = new ConcurrentHashMap<>();

    public SwitchBatchSerde() {
        this(null);
    }

    /**
     * Batches in Confluent's wire format: the same body behind a 0 byte and the schema id. Written here,
     * as a registry serializer takes an Avro object and a batch is columns without an object per switch.
     */
    public SwitchBatchSerde(SchemaRegistry registry) {
        this.registry = registry;
    }

    private static byte[] header(org.apache.avro.Schema schema) {
        long fingerprint = SchemaNormalization.parsingFingerprint64(schema);
        return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01).putLong(fingerprint).array();
    }

    @Override
    public byte[] serialize(String topic, SwitchBatch b) {
        if (b == null) return null;
        byte[] header = registry == null ? HEADER : prefixes.computeIfAbsent(topic, t -> registry.prefix(t, ContextSwitchBatch.getClassSchema()));
        return writer.get().write(b, header);
    }

    /**
     * Decodes into a new batch: Kafka Streams decodes a partition's next record before the one it
     * returned is processed, so a reused batch would change under its reader.
     */
    @Override
    public SwitchBatch deserialize(String topic, byte[] data) {
        return data == null ? null : deserialize(topic, data, null);
    }

    /** Decodes into {@code into} (emptied first), or a new batch when it is null: for a reader that is done with the last one. */
    public SwitchBatch deserialize(String topic, byte[] data, SwitchBatch into) {
        long fingerprint;
        int body;
        if (RegistryFraming.isFramed(data)) {
            if (registry == null) throw RegistryFraming.needsRegistry(topic, data);
            fingerprint = fingerprints.computeIfAbsent(RegistryFraming.id(data), id -> SchemaNormalization.parsingFingerprint64(registry.schema(id)));
            body = RegistryFraming.PREFIX_BYTES;
        } else {
            if (data.length < HEADER.length || data[0] != HEADER[0] || data[1] != HEADER[1]) {
                throw new SerializationException("a " + topic + " value of " + data.length + " bytes is no batch");
            }
            fingerprint = (long) LONG_LE.get(data, 2);
            body = HEADER.length;
        }
        try {
            AvroBinaryReader r = new AvroBinaryReader(data, body, data.length);
            if (fingerprint == FINGERPRINT) return reader.get().read(r, data.length, into, true);
            if (fingerprint == FINGERPRINT_V3) return reader.get().read(r, data.length, into, false);
            if (fingerprint == FINGERPRINT_V2) return readRowCells(r, data, into, false);
            if (fingerprint == FINGERPRINT_V1) return readRowCells(r, data, into, true);
        } catch (RuntimeException e) {
            throw new SerializationException("cannot decode a " + topic + " value: " + e.getMessage(), e);
        }
        throw new SerializationException("a " + topic + " value is not a ContextSwitchBatch of this schema"
                + " (single-object header or schema fingerprint differs)");
    }

    /** A batch of the first two schemas: every column with a cell per row, a union where it may be null. */
    private static SwitchBatch readRowCells(AvroBinaryReader r, byte[] data, SwitchBatch into, boolean v1) {
        String session = r.string();
        String host = r.string();
        int n = r.readInt();
        if (n < 0 || n > data.length) throw new MalformedAvroException("a count of " + n + " rows in " + data.length + " bytes");
        SwitchBatch b = (into != null ? into : new SwitchBatch(n)).reset(session, host);
        b.resize(n);
        r.ints(b.cpu, n);
        r.longs(b.timestamp, n);
        r.longs(b.timeNanos, n);
        r.enums(b.source, n, SOURCES);
        r.ints(b.oldThreadId, n);
        r.optionalInts(b.oldThreadPriority, n, SwitchBatch.NONE);
        r.optionalEnums(b.oldThreadState, n, SwitchBatch.NONE, STATES, true, UNKNOWN_VALUE);
        r.optionalEnums(b.oldThreadWaitReason, n, SwitchBatch.NONE, REASONS, true, UNKNOWN_VALUE);
        r.optionalEnums(b.oldThreadWaitMode, n, SwitchBatch.NONE, MODES, false, UNKNOWN_VALUE);
        r.optionalInts(b.newThreadId, n, SwitchBatch.NONE);
        r.optionalInts(b.newThreadPriority, n, SwitchBatch.NONE);
        r.optionalLongs(b.newThreadWaitTicks, n, SwitchBatch.NO_TIME);
        int[] p = {0};
        r.items(n, i -> {
            b.pmcStart[i] = p[0];
            if (r.index(2) == 1) {
                for (long c = r.block(); c != 0; c = r.block()) {
                    if (c > data.length) throw new MalformedAvroException("a block of " + c + " counters");
                    b.pmcCapacity((int) (p[0] + c));
                    for (long y = 0; y < c; y++) b.pmc[p[0]++] = r.readLong();
                }
            }
        });
        b.pmcStart[n] = p[0];
        r.optionalLongs(b.newThreadTimeSinceLastNanos, n, SwitchBatch.NO_TIME);
        r.optionalLongs(b.oldThreadRunNanos, n, SwitchBatch.NO_TIME);
        ColumnarBatchReader.readThreads(r, b);
        if (v1) {
            java.util.Arrays.fill(b.newThreadReadyNanos, 0, n, SwitchBatch.NO_TIME);
            java.util.Arrays.fill(b.newThreadWaitsNanos, 0, n, SwitchBatch.NO_TIME);
            java.util.Arrays.fill(b.readyingThreadId, 0, n, SwitchBatch.NONE);
            java.util.Arrays.fill(b.readyingProcessId, 0, n, SwitchBatch.NONE);
        } else {
            r.optionalLongs(b.newThreadReadyNanos, n, SwitchBatch.NO_TIME);
            r.optionalLongs(b.newThreadWaitsNanos, n, SwitchBatch.NO_TIME);
            r.optionalInts(b.readyingThreadId, n, SwitchBatch.NONE);
            r.optionalInts(b.readyingProcessId, n, SwitchBatch.NONE);
        }
        for (int[] column : new int[][] {b.previousCState, b.oldThreadRank, b.newThreadPriorityDecrement, b.oldThreadIdealProcessor,
                b.oldThreadRemainingQuantum}) {
            java.util.Arrays.fill(column, 0, n, SwitchBatch.NONE);
        }
        return b;
    }

    /**
     * The serde of the configuration: this one, or the configured factory's serde for the generated
     * class (a schema-registry serde, say), converting batches on the way.
     */
    public static Serde<SwitchBatch> forConfig(Map<String, ?> config) {
        Object factory = config.get(SwapstreamConfig.SERDE_FACTORY);
        if (factory == null || factory.toString().isBlank()) return new SwitchBatchSerde(SchemaRegistry.of(config));
        Serde<ContextSwitchBatch> avro = RecordSerdeFactory.from(config).serde(ContextSwitchBatch.class, config);
        return Serdes.serdeFrom((topic, b) -> avro.serializer().serialize(topic, toAvro(b)),
                (topic, bytes) -> fromAvro(avro.deserializer().deserialize(topic, bytes)));
    }

    /**
     * The batch as the generated Avro class, through this serde's bytes (for other serdes, printing
     * and tests: one encoder, so the two cannot differ).
     */
    public static ContextSwitchBatch toAvro(SwitchBatch b) {
        try {
            return ContextSwitchBatch.getDecoder().decode(SHARED.serialize("", b));
        } catch (java.io.IOException e) {
            throw new SerializationException("a batch Avro cannot read back: " + e.getMessage(), e);
        }
    }

    public static SwitchBatch fromAvro(ContextSwitchBatch a) {
        try {
            ByteBuffer bytes = ContextSwitchBatch.getEncoder().encode(a);
            return SHARED.deserialize("", Arrays.copyOfRange(bytes.array(), bytes.arrayOffset() + bytes.position(),
                    bytes.arrayOffset() + bytes.limit()));
        } catch (java.io.IOException e) {
            throw new SerializationException("a batch Avro cannot write: " + e.getMessage(), e);
        }
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) { }

    @Override
    public void close() { }

    @Override
    public Serializer<SwitchBatch> serializer() { return this; }

    @Override
    public Deserializer<SwitchBatch> deserializer() { return this; }
}
