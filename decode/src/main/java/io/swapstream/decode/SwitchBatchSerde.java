package io.swapstream.decode;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.avro.SwitchSource;
import io.swapstream.schemas.avro.ThreadState;
import io.swapstream.schemas.avro.WaitMode;
import io.swapstream.schemas.avro.WaitReason;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import io.swapstream.schemas.serde.SchemaHistory;
import java.util.ArrayList;
import java.util.List;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * {@link SwitchBatch} as an Avro {@code ContextSwitchBatch} in single-object encoding, written and
 * read column by column ({@link AvroBinary}): the same bytes the generated class makes, without an
 * object or a boxed value per switch (the generated class holds {@code List<Integer>} columns).
 * Hand-written because Avro has no primitive-array reader or writer for unions of null.
 */
public final class SwitchBatchSerde implements Serde<SwitchBatch>, Serializer<SwitchBatch>, Deserializer<SwitchBatch> {
    private static final byte[] HEADER = header(ContextSwitchBatch.getClassSchema());
    /** Batches written before ready time existed: the same columns without the last four. */
    private static final byte[] HEADER_V1 = header(SchemaHistory.earlier(ContextSwitchBatch.class).get(0));
    /** What an Unknown enum symbol reads back as: outside every table. */
    static final int UNKNOWN_VALUE = 255;

    private static final int STATES = ThreadState.values().length;
    private static final int REASONS = WaitReason.values().length;
    private static final int MODES = WaitMode.values().length;
    private static final int SOURCES = SwitchSource.values().length;

    /**
     * Output buffers of the thread at work: Kafka Streams shares one serde between the tasks and
     * threads of a topology.
     */
    private final ThreadLocal<AvroBinary.Writer> scratch = ThreadLocal.withInitial(AvroBinary.Writer::new);

    private static byte[] header(org.apache.avro.Schema schema) {
        long fingerprint = SchemaNormalization.parsingFingerprint64(schema);
        return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01).putLong(fingerprint).array();
    }

    @Override
    public byte[] serialize(String topic, SwitchBatch b) {
        if (b == null) return null;
        AvroBinary.Writer w = scratch.get();
        w.reset();
        w.bytes(HEADER);
        int n = b.count();
        w.string(b.session());
        w.string(b.host());
        w.writeLong(n);
        w.ints(b.cpu, n);
        w.longs(b.timestamp, n);
        w.longs(b.timeNanos, n);
        w.ints(b.source, n);
        w.ints(b.oldThreadId, n);
        w.optionalInts(b.oldThreadPriority, n, SwitchBatch.NONE);
        w.optionalEnums(b.oldThreadState, n, SwitchBatch.NONE, STATES, true);
        w.optionalEnums(b.oldThreadWaitReason, n, SwitchBatch.NONE, REASONS, true);
        w.optionalEnums(b.oldThreadWaitMode, n, SwitchBatch.NONE, MODES, false);
        w.optionalInts(b.newThreadId, n, SwitchBatch.NONE);
        w.optionalInts(b.newThreadPriority, n, SwitchBatch.NONE);
        w.optionalLongs(b.newThreadWaitTicks, n, SwitchBatch.NO_TIME);
        w.arrayStart(n);
        for (int i = 0; i < n; i++) {
            int from = b.pmcStart[i];
            int to = b.pmcStart[i + 1];
            w.ensure(1);
            if (from == to) {
                w.buf[w.pos++] = 0;
            } else {
                w.buf[w.pos++] = 2;
                w.arrayStart(to - from);
                for (int k = from; k < to; k++) w.writeLong(b.pmc[k]);
                w.arrayEnd();
            }
        }
        w.arrayEnd();
        w.optionalLongs(b.newThreadTimeSinceLastNanos, n, SwitchBatch.NO_TIME);
        w.optionalLongs(b.oldThreadRunNanos, n, SwitchBatch.NO_TIME);
        List<ThreadInfo> threads = b.threads();
        w.arrayStart(threads.size());
        for (ThreadInfo t : threads) {
            w.string(t.session());
            w.writeLong(t.threadId());
            optional(w, t.processId());
            optional(w, t.processName());
            optional(w, t.threadName());
            optional(w, t.basePriority());
            optional(w, t.startNanos());
            optional(w, t.endNanos());
        }
        w.arrayEnd();
        w.optionalLongs(b.newThreadReadyNanos, n, SwitchBatch.NO_TIME);
        w.optionalLongs(b.newThreadWaitsNanos, n, SwitchBatch.NO_TIME);
        w.optionalInts(b.readyingThreadId, n, SwitchBatch.NONE);
        w.optionalInts(b.readyingProcessId, n, SwitchBatch.NONE);
        return w.toByteArray();
    }

    private static void optional(AvroBinary.Writer w, Number v) {
        w.writeLong(v == null ? 0 : 1);
        if (v != null) w.writeLong(v.longValue());
    }

    private static void optional(AvroBinary.Writer w, String v) {
        w.writeLong(v == null ? 0 : 1);
        if (v != null) w.string(v);
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
        if (data.length < HEADER.length) throw new SerializationException("a " + topic + " value of " + data.length + " bytes is no batch");
        boolean v1 = false;
        if (!startsWith(data, HEADER)) {
            if (!startsWith(data, HEADER_V1)) {
                throw new SerializationException("a " + topic + " value is not a ContextSwitchBatch of this schema"
                        + " (single-object header or schema fingerprint differs)");
            }
            v1 = true;
        }
        try {
            AvroBinary.Reader r = new AvroBinary.Reader(data, HEADER.length, data.length);
            String session = r.string();
            String host = r.string();
            int n = r.readInt();
            // every row takes at least a byte in each column
            if (n < 0 || n > data.length) throw new AvroBinary.Malformed("a count of " + n + " rows in " + data.length + " bytes");
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
                        if (c > data.length) throw new AvroBinary.Malformed("a block of " + c + " counters");
                        b.pmcCapacity((int) (p[0] + c));
                        for (long y = 0; y < c; y++) b.pmc[p[0]++] = r.readLong();
                    }
                }
            });
            b.pmcStart[n] = p[0];
            r.optionalLongs(b.newThreadTimeSinceLastNanos, n, SwitchBatch.NO_TIME);
            r.optionalLongs(b.oldThreadRunNanos, n, SwitchBatch.NO_TIME);
            for (long k = r.block(); k != 0; k = r.block()) {
                for (long j = 0; j < k; j++) {
                    String s = r.string();
                    int tid = r.readInt();
                    Integer pid = r.index(2) == 0 ? null : r.readInt();
                    String process = r.index(2) == 0 ? null : r.string();
                    String name = r.index(2) == 0 ? null : r.string();
                    Integer base = r.index(2) == 0 ? null : r.readInt();
                    Long start = r.index(2) == 0 ? null : r.readLong();
                    Long end = r.index(2) == 0 ? null : r.readLong();
                    b.addThread(new ThreadInfo(s, tid, pid, process, name, base, start, end));
                }
            }
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
            return b;
        } catch (RuntimeException e) {
            throw new SerializationException("cannot decode a " + topic + " value: " + e.getMessage(), e);
        }
    }

    private static boolean startsWith(byte[] data, byte[] header) {
        for (int i = 0; i < header.length; i++) if (data[i] != header[i]) return false;
        return true;
    }

    /**
     * The serde of the configuration: this one, or the configured factory's serde for the generated
     * class (a schema-registry serde, say), converting batches on the way.
     */
    public static Serde<SwitchBatch> forConfig(Map<String, ?> config) {
        Object factory = config.get(SwapstreamConfig.SERDE_FACTORY);
        if (factory == null || factory.toString().isBlank()) return new SwitchBatchSerde();
        Serde<ContextSwitchBatch> avro = RecordSerdeFactory.from(config).serde(ContextSwitchBatch.class, config);
        return Serdes.serdeFrom((topic, b) -> avro.serializer().serialize(topic, toAvro(b)),
                (topic, bytes) -> fromAvro(avro.deserializer().deserialize(topic, bytes)));
    }

    /** The batch as the generated Avro class (boxed columns: for other serdes and tests). */
    public static ContextSwitchBatch toAvro(SwitchBatch b) {
        int n = b.count();
        List<Integer> cpu = new ArrayList<>(n);
        List<Long> ts = new ArrayList<>(n);
        List<Long> nanos = new ArrayList<>(n);
        List<SwitchSource> source = new ArrayList<>(n);
        List<Integer> oldTid = new ArrayList<>(n);
        List<Integer> oldPri = new ArrayList<>(n);
        List<ThreadState> state = new ArrayList<>(n);
        List<WaitReason> reason = new ArrayList<>(n);
        List<WaitMode> mode = new ArrayList<>(n);
        List<Integer> newTid = new ArrayList<>(n);
        List<Integer> newPri = new ArrayList<>(n);
        List<Long> ticks = new ArrayList<>(n);
        List<List<Long>> pmc = new ArrayList<>(n);
        List<Long> since = new ArrayList<>(n);
        List<Long> run = new ArrayList<>(n);
        List<Long> readyNanos = new ArrayList<>(n);
        List<Long> waitsNanos = new ArrayList<>(n);
        List<Integer> readier = new ArrayList<>(n);
        List<Integer> readierPid = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            cpu.add(b.cpu[i]);
            ts.add(b.timestamp[i]);
            nanos.add(b.timeNanos[i]);
            source.add(SwitchSource.values()[b.source[i]]);
            oldTid.add(b.oldThreadId[i]);
            oldPri.add(b.oldThreadPriority[i] == SwitchBatch.NONE ? null : b.oldThreadPriority[i]);
            state.add(symbol(ThreadState.values(), b.oldThreadState[i]));
            reason.add(symbol(WaitReason.values(), b.oldThreadWaitReason[i]));
            int m = b.oldThreadWaitMode[i];
            mode.add(m >= 0 && m < MODES ? WaitMode.values()[m] : null); // no Unknown symbol: a mode outside the table is null
            newTid.add(b.newThreadId[i] == SwitchBatch.NONE ? null : b.newThreadId[i]);
            newPri.add(b.newThreadPriority[i] == SwitchBatch.NONE ? null : b.newThreadPriority[i]);
            ticks.add(b.newThreadWaitTicks[i] == SwitchBatch.NO_TIME ? null : b.newThreadWaitTicks[i]);
            List<Long> counters = null;
            if (b.pmcCount(i) > 0) {
                counters = new ArrayList<>();
                for (int k = 0; k < b.pmcCount(i); k++) counters.add(b.pmc(i, k));
            }
            pmc.add(counters);
            since.add(b.newThreadTimeSinceLastNanos[i] == SwitchBatch.NO_TIME ? null : b.newThreadTimeSinceLastNanos[i]);
            run.add(b.oldThreadRunNanos[i] == SwitchBatch.NO_TIME ? null : b.oldThreadRunNanos[i]);
            readyNanos.add(b.newThreadReadyNanos[i] == SwitchBatch.NO_TIME ? null : b.newThreadReadyNanos[i]);
            waitsNanos.add(b.newThreadWaitsNanos[i] == SwitchBatch.NO_TIME ? null : b.newThreadWaitsNanos[i]);
            readier.add(b.readyingThreadId[i] == SwitchBatch.NONE ? null : b.readyingThreadId[i]);
            readierPid.add(b.readyingProcessId[i] == SwitchBatch.NONE ? null : b.readyingProcessId[i]);
        }
        List<io.swapstream.schemas.avro.ThreadInfo> threads = new ArrayList<>();
        for (ThreadInfo t : b.threads()) {
            threads.add(new io.swapstream.schemas.avro.ThreadInfo(t.session(), t.threadId(), t.processId(), t.processName(),
                    t.threadName(), t.basePriority(), t.startNanos(), t.endNanos()));
        }
        return new ContextSwitchBatch(b.session(), b.host(), n, cpu, ts, nanos, source, oldTid, oldPri, state, reason, mode,
                newTid, newPri, ticks, pmc, since, run, threads, readyNanos, waitsNanos, readier, readierPid);
    }

    /** A {@code null} cell, the symbol of the same index, or the last symbol (Unknown) past the table. */
    private static <E extends Enum<E>> E symbol(E[] symbols, int v) {
        if (v == SwitchBatch.NONE) return null;
        return v >= 0 && v < symbols.length ? symbols[v] : symbols[symbols.length - 1];
    }

    public static SwitchBatch fromAvro(ContextSwitchBatch a) {
        SwitchBatch b = new SwitchBatch(Math.max(16, a.getCount())).reset(a.getSession(), a.getHost());
        for (int i = 0; i < a.getCount(); i++) {
            List<Long> counters = a.getPmcCounters().get(i);
            long[] pmc = counters == null ? null : counters.stream().mapToLong(Long::longValue).toArray();
            b.add(a.getCpu().get(i), a.getTimestamp().get(i), a.getTimeNanos().get(i), a.getSource().get(i).ordinal(),
                    a.getOldThreadId().get(i), orNone(a.getOldThreadPriority().get(i)),
                    ordinal(a.getOldThreadState().get(i), ThreadState.Unknown),
                    ordinal(a.getOldThreadWaitReason().get(i), WaitReason.Unknown),
                    a.getOldThreadWaitMode().get(i) == null ? SwitchBatch.NONE : a.getOldThreadWaitMode().get(i).ordinal(),
                    orNone(a.getNewThreadId().get(i)), orNone(a.getNewThreadPriority().get(i)),
                    orNoTime(a.getNewThreadWaitTicks().get(i)), pmc, orNoTime(a.getNewThreadTimeSinceLastNanos().get(i)),
                    orNoTime(a.getOldThreadRunNanos().get(i)), orNoTime(cell(a.getNewThreadReadyNanos(), i)),
                    orNoTime(cell(a.getNewThreadWaitsNanos(), i)), orNone(cell(a.getReadyingThreadId(), i)),
                    orNone(cell(a.getReadyingProcessId(), i)));
        }
        for (io.swapstream.schemas.avro.ThreadInfo t : a.getThreads()) {
            b.addThread(new ThreadInfo(t.getSession(), t.getThreadId(), t.getProcessId(), t.getProcessName(), t.getThreadName(),
                    t.getBasePriority(), t.getStartNanos(), t.getEndNanos()));
        }
        return b;
    }

    /** A column's cell; a record of the first schema read with the new one has the column empty. */
    private static <T> T cell(List<T> column, int i) {
        return i < column.size() ? column.get(i) : null;
    }

    private static int ordinal(Enum<?> e, Enum<?> unknown) {
        if (e == null) return SwitchBatch.NONE;
        return e == unknown ? UNKNOWN_VALUE : e.ordinal();
    }

    private static int orNone(Integer v) { return v == null ? SwitchBatch.NONE : v; }
    private static long orNoTime(Long v) { return v == null ? SwitchBatch.NO_TIME : v; }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) { }

    @Override
    public void close() { }

    @Override
    public Serializer<SwitchBatch> serializer() { return this; }

    @Override
    public Deserializer<SwitchBatch> deserializer() { return this; }
}
