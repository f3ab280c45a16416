package io.swapstream.decode;

import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import io.swapstream.schemas.avro.SwitchSource;
import io.swapstream.schemas.avro.ThreadState;
import io.swapstream.schemas.avro.WaitMode;
import io.swapstream.schemas.avro.WaitReason;
import io.swapstream.schemas.serde.RecordSerdeFactory;
import java.util.ArrayList;
import java.util.List;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * {@link SwitchBatch} as an Avro {@code ContextSwitchBatch} in single-object encoding, written and
 * read column by column with Avro's binary encoder: the same bytes the generated class makes, without
 * an object or a boxed value per switch (the generated class holds {@code List<Integer>} columns).
 * Hand-written because Avro has no primitive-array reader or writer for unions of null.
 */
public final class SwitchBatchSerde implements Serde<SwitchBatch>, Serializer<SwitchBatch>, Deserializer<SwitchBatch> {
    private static final byte[] HEADER = header();
    private static final int STATE_UNKNOWN = 10;
    private static final int REASON_UNKNOWN = 43;
    /** What an Unknown enum symbol reads back as: outside every table. */
    static final int UNKNOWN_VALUE = 255;

    /**
     * Buffers of the thread at work: Kafka Streams shares one serde between the tasks and threads
     * of a topology.
     */
    private static final class Scratch {
        final Growable out = new Growable();
        BinaryEncoder encoder;
        BinaryDecoder decoder;
    }

    private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

    private static byte[] header() {
        long fingerprint = SchemaNormalization.parsingFingerprint64(ContextSwitchBatch.getClassSchema());
        return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01).putLong(fingerprint).array();
    }

    /** A byte stream whose array is reused between records; not synchronized, unlike ByteArrayOutputStream. */
    private static final class Growable extends java.io.OutputStream {
        byte[] buf = new byte[64 * 1024];
        int count;

        void reset() { count = 0; }

        private void ensure(int n) {
            if (count + n > buf.length) buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, count + n));
        }

        @Override
        public void write(int b) {
            ensure(1);
            buf[count++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, buf, count, len);
            count += len;
        }

        byte[] toByteArray() { return java.util.Arrays.copyOf(buf, count); }
    }

    @Override
    public byte[] serialize(String topic, SwitchBatch b) {
        if (b == null) return null;
        try {
            Scratch x = scratch.get();
            Growable out = x.out;
            out.reset();
            out.write(HEADER);
            // buffered: the direct encoder writes a varint byte by byte into the stream
            BinaryEncoder e = x.encoder = EncoderFactory.get().binaryEncoder(out, x.encoder);
            int n = b.count();
            e.writeString(b.session());
            e.writeString(b.host());
            e.writeInt(n);
            ints(e, b.cpu, n);
            longs(e, b.timestamp, n);
            longs(e, b.timeNanos, n);
            start(e, n);
            for (int i = 0; i < n; i++) { e.startItem(); e.writeEnum(b.source[i]); }
            e.writeArrayEnd();
            ints(e, b.oldThreadId, n);
            optionalInts(e, b.oldThreadPriority, n);
            optionalEnums(e, b.oldThreadState, n, STATE_UNKNOWN);
            optionalEnums(e, b.oldThreadWaitReason, n, REASON_UNKNOWN);
            optionalEnums(e, b.oldThreadWaitMode, n, 2);
            optionalInts(e, b.newThreadId, n);
            optionalInts(e, b.newThreadPriority, n);
            optionalLongs(e, b.newThreadWaitTicks, n);
            start(e, n);
            for (int i = 0; i < n; i++) {
                e.startItem();
                int from = b.pmcStart[i];
                int to = b.pmcStart[i + 1];
                if (from == to) {
                    e.writeIndex(0);
                } else {
                    e.writeIndex(1);
                    start(e, to - from);
                    for (int k = from; k < to; k++) { e.startItem(); e.writeLong(b.pmc[k]); }
                    e.writeArrayEnd();
                }
            }
            e.writeArrayEnd();
            optionalLongs(e, b.newThreadTimeSinceLastNanos, n);
            optionalLongs(e, b.oldThreadRunNanos, n);
            List<ThreadInfo> threads = b.threads();
            start(e, threads.size());
            for (ThreadInfo t : threads) {
                e.startItem();
                e.writeString(t.session());
                e.writeInt(t.threadId());
                optionalInt(e, t.processId());
                optionalString(e, t.processName());
                optionalString(e, t.threadName());
                optionalInt(e, t.basePriority());
                optionalLong(e, t.startNanos());
                optionalLong(e, t.endNanos());
            }
            e.writeArrayEnd();
            e.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new SerializationException("cannot encode a switch batch: " + e.getMessage(), e);
        }
    }

    private static void optionalInt(BinaryEncoder e, Integer v) throws IOException {
        e.writeIndex(v == null ? 0 : 1);
        if (v != null) e.writeInt(v);
    }

    private static void optionalLong(BinaryEncoder e, Long v) throws IOException {
        e.writeIndex(v == null ? 0 : 1);
        if (v != null) e.writeLong(v);
    }

    private static void optionalString(BinaryEncoder e, String v) throws IOException {
        e.writeIndex(v == null ? 0 : 1);
        if (v != null) e.writeString(v);
    }

    private static void start(BinaryEncoder e, int n) throws IOException {
        e.writeArrayStart();
        e.setItemCount(n);
    }

    private static void ints(BinaryEncoder e, int[] v, int n) throws IOException {
        start(e, n);
        for (int i = 0; i < n; i++) { e.startItem(); e.writeInt(v[i]); }
        e.writeArrayEnd();
    }

    private static void longs(BinaryEncoder e, long[] v, int n) throws IOException {
        start(e, n);
        for (int i = 0; i < n; i++) { e.startItem(); e.writeLong(v[i]); }
        e.writeArrayEnd();
    }

    private static void optionalInts(BinaryEncoder e, int[] v, int n) throws IOException {
        start(e, n);
        for (int i = 0; i < n; i++) {
            e.startItem();
            if (v[i] == SwitchBatch.NONE) {
                e.writeIndex(0);
            } else {
                e.writeIndex(1);
                e.writeInt(v[i]);
            }
        }
        e.writeArrayEnd();
    }

    private static void optionalLongs(BinaryEncoder e, long[] v, int n) throws IOException {
        start(e, n);
        for (int i = 0; i < n; i++) {
            e.startItem();
            if (v[i] == SwitchBatch.NO_TIME) {
                e.writeIndex(0);
            } else {
                e.writeIndex(1);
                e.writeLong(v[i]);
            }
        }
        e.writeArrayEnd();
    }

    /** Enum columns: values 0..unknown-1 are the symbols of the same index, anything else is Unknown. */
    private static void optionalEnums(BinaryEncoder e, int[] v, int n, int unknown) throws IOException {
        start(e, n);
        for (int i = 0; i < n; i++) {
            e.startItem();
            if (v[i] == SwitchBatch.NONE) {
                e.writeIndex(0);
            } else {
                e.writeIndex(1);
                e.writeEnum(v[i] >= 0 && v[i] < unknown ? v[i] : unknown);
            }
        }
        e.writeArrayEnd();
    }

    /**
     * Decodes into a new batch: Kafka Streams decodes a partition's next record before the one it
     * returned is processed, so a reused batch would change under its reader.
     */
    @Override
    public SwitchBatch deserialize(String topic, byte[] data) {
        if (data == null) return null;
        if (data.length < HEADER.length) throw new SerializationException("a " + topic + " value of " + data.length + " bytes is no batch");
        for (int i = 0; i < HEADER.length; i++) {
            if (data[i] != HEADER[i]) {
                throw new SerializationException("a " + topic + " value is not a ContextSwitchBatch of this schema"
                        + " (single-object header or schema fingerprint differs)");
            }
        }
        try {
            Scratch x = scratch.get();
            BinaryDecoder d = x.decoder = DecoderFactory.get().binaryDecoder(data, HEADER.length, data.length - HEADER.length, x.decoder);
            String session = d.readString();
            String host = d.readString();
            int n = d.readInt();
            if (n < 0 || n > data.length) throw new IOException("a count of " + n + " rows in " + data.length + " bytes");
            SwitchBatch b = new SwitchBatch(n).reset(session, host);
            b.resize(n);
            readInts(d, b.cpu, n);
            readLongs(d, b.timestamp, n);
            readLongs(d, b.timeNanos, n);
            int i = 0;
            for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) for (long j = 0; j < k; j++) b.source[check(i++, n)] = d.readEnum();
            expect(i, n);
            readInts(d, b.oldThreadId, n);
            readOptionalInts(d, b.oldThreadPriority, n);
            readOptionalEnums(d, b.oldThreadState, n, STATE_UNKNOWN);
            readOptionalEnums(d, b.oldThreadWaitReason, n, REASON_UNKNOWN);
            readOptionalEnums(d, b.oldThreadWaitMode, n, 2);
            readOptionalInts(d, b.newThreadId, n);
            readOptionalInts(d, b.newThreadPriority, n);
            readOptionalLongs(d, b.newThreadWaitTicks, n);
            i = 0;
            int p = 0;
            for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) {
                for (long j = 0; j < k; j++) {
                    b.pmcStart[check(i, n)] = p;
                    if (d.readIndex() == 1) {
                        for (long c = d.readArrayStart(); c != 0; c = d.arrayNext()) {
                            b.pmcCapacity((int) (p + c));
                            for (long y = 0; y < c; y++) b.pmc[p++] = d.readLong();
                        }
                    }
                    i++;
                }
            }
            expect(i, n);
            b.pmcStart[n] = p;
            readOptionalLongs(d, b.newThreadTimeSinceLastNanos, n);
            readOptionalLongs(d, b.oldThreadRunNanos, n);
            for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) {
                for (long j = 0; j < k; j++) {
                    String s = d.readString();
                    int tid = d.readInt();
                    Integer pid = d.readIndex() == 0 ? null : d.readInt();
                    String process = d.readIndex() == 0 ? null : d.readString();
                    String name = d.readIndex() == 0 ? null : d.readString();
                    Integer base = d.readIndex() == 0 ? null : d.readInt();
                    Long start = d.readIndex() == 0 ? null : d.readLong();
                    Long end = d.readIndex() == 0 ? null : d.readLong();
                    b.addThread(new ThreadInfo(s, tid, pid, process, name, base, start, end));
                }
            }
            return b;
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode a " + topic + " value: " + e.getMessage(), e);
        }
    }

    private static int check(int i, int n) throws IOException {
        if (i >= n) throw new IOException("a column holds more than the batch's " + n + " rows");
        return i;
    }

    private static void expect(int i, int n) throws IOException {
        if (i != n) throw new IOException("a column holds " + i + " rows, the batch " + n);
    }

    private static void readInts(BinaryDecoder d, int[] v, int n) throws IOException {
        int i = 0;
        for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) for (long j = 0; j < k; j++) v[check(i++, n)] = d.readInt();
        expect(i, n);
    }

    private static void readLongs(BinaryDecoder d, long[] v, int n) throws IOException {
        int i = 0;
        for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) for (long j = 0; j < k; j++) v[check(i++, n)] = d.readLong();
        expect(i, n);
    }

    private static void readOptionalInts(BinaryDecoder d, int[] v, int n) throws IOException {
        int i = 0;
        for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) {
            for (long j = 0; j < k; j++) v[check(i++, n)] = d.readIndex() == 0 ? SwitchBatch.NONE : d.readInt();
        }
        expect(i, n);
    }

    private static void readOptionalLongs(BinaryDecoder d, long[] v, int n) throws IOException {
        int i = 0;
        for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) {
            for (long j = 0; j < k; j++) v[check(i++, n)] = d.readIndex() == 0 ? SwitchBatch.NO_TIME : d.readLong();
        }
        expect(i, n);
    }

    private static void readOptionalEnums(BinaryDecoder d, int[] v, int n, int unknown) throws IOException {
        int i = 0;
        for (long k = d.readArrayStart(); k != 0; k = d.arrayNext()) {
            for (long j = 0; j < k; j++) {
                int x = d.readIndex() == 0 ? SwitchBatch.NONE : d.readEnum();
                v[check(i++, n)] = x == unknown ? UNKNOWN_VALUE : x;
            }
        }
        expect(i, n);
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
        for (int i = 0; i < n; i++) {
            cpu.add(b.cpu[i]);
            ts.add(b.timestamp[i]);
            nanos.add(b.timeNanos[i]);
            source.add(SwitchSource.values()[b.source[i]]);
            oldTid.add(b.oldThreadId[i]);
            oldPri.add(b.oldThreadPriority[i] == SwitchBatch.NONE ? null : b.oldThreadPriority[i]);
            state.add(symbol(ThreadState.values(), b.oldThreadState[i]));
            reason.add(symbol(WaitReason.values(), b.oldThreadWaitReason[i]));
            mode.add(symbol(WaitMode.values(), b.oldThreadWaitMode[i]));
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
        }
        List<io.swapstream.schemas.avro.ThreadInfo> threads = new ArrayList<>();
        for (ThreadInfo t : b.threads()) {
            threads.add(new io.swapstream.schemas.avro.ThreadInfo(t.session(), t.threadId(), t.processId(), t.processName(),
                    t.threadName(), t.basePriority(), t.startNanos(), t.endNanos()));
        }
        return new ContextSwitchBatch(b.session(), b.host(), n, cpu, ts, nanos, source, oldTid, oldPri, state, reason, mode,
                newTid, newPri, ticks, pmc, since, run, threads);
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
                    orNoTime(a.getOldThreadRunNanos().get(i)));
        }
        for (io.swapstream.schemas.avro.ThreadInfo t : a.getThreads()) {
            b.addThread(new ThreadInfo(t.getSession(), t.getThreadId(), t.getProcessId(), t.getProcessName(), t.getThreadName(),
                    t.getBasePriority(), t.getStartNanos(), t.getEndNanos()));
        }
        return b;
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
