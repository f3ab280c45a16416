package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.encoding.ByteArrayInput;
import com.datadoghq.sketch.ddsketch.encoding.GrowingByteArrayOutput;
import io.swapstream.schemas.state.StateFormat;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * ThreadStatsAccumulator to bytes and back, for state stores (the sketches in DDSketch's own
 * encoding, more compact than its protobuf form the rows carry), under {@link StateFormat}'s one version rule.
 */
public final class AccumulatorCodec {
    private AccumulatorCodec() {}

    static final StateFormat FORMAT = new StateFormat("thread accumulator", 4);

    private static final ThreadLocal<StateWriter> WRITER = ThreadLocal.withInitial(() -> new StateWriter(4096));

    /** A flush encodes thousands of accumulators in a row: two scratch outputs per thread, not two arrays per accumulator. */
    private static final ThreadLocal<GrowingByteArrayOutput[]> SCRATCH = ThreadLocal.withInitial(() -> new GrowingByteArrayOutput[] {
            GrowingByteArrayOutput.withInitialCapacity(4096), GrowingByteArrayOutput.withInitialCapacity(4096),
            GrowingByteArrayOutput.withInitialCapacity(4096)});

    /** {@code s} in DDSketch's own encoding, in {@code out} (empty for none). */
    private static GrowingByteArrayOutput sketch(DDSketch s, GrowingByteArrayOutput out) {
        out.clear();
        if (s == null) return out;
        // DDSketch's own encoding: serialize() writes the protobuf form, which decode() does not read
        try {
            s.encode(out, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static DDSketch sketch(byte[] bytes) {
        try {
            return DDSketch.decode(ByteArrayInput.wrap(bytes), ThreadStatsAccumulator::newStore);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] encode(ThreadStatsAccumulator a) {
        return encode(a, Long.MIN_VALUE);
    }

    /** A window's accumulator: its window's start first ({@link #windowStartOf}), so a scan reads the start without decoding the rest. */
    public static byte[] encodeWindow(ThreadStatsAccumulator a, long windowStart) {
        return encode(a, windowStart);
    }

    private static byte[] encode(ThreadStatsAccumulator a, long windowStart) {
        GrowingByteArrayOutput[] scratch = SCRATCH.get();
        GrowingByteArrayOutput waits = sketch(a.waits, scratch[0]);
        GrowingByteArrayOutput runs = sketch(a.runs, scratch[2]);
        StateWriter o = WRITER.get();
        o.clear();
        FORMAT.writeTo(o, b -> {
            b.writeLong(windowStart);
            b.writeLong(a.firstNanos).writeLong(a.lastNanos).writeLong(a.switchIn).writeLong(a.switchOut).writeLong(a.voluntary)
                    .writeLong(a.involuntary).writeLong(a.waitReasonBitMap).writeLong(a.waitCount).writeLong(a.waitSum)
                    .writeLong(a.waitMin).writeLong(a.waitMax).writeLong(a.ticksCount).writeLong(a.ticksSum).writeLong(a.ticksMax)
                    .writeLong(a.runCount).writeLong(a.runSum).writeLong(a.runMax).writeLong(a.priorityCount).writeLong(a.prioritySum)
                    .writeInt(a.priorityMin).writeInt(a.priorityMax);
            int reasons = 0;
            for (long r : a.waitReasons) if (r != 0) reasons++;
            b.writeInt(reasons);
            for (int i = 0; i < a.waitReasons.length; i++) if (a.waitReasons[i] != 0) b.writeInt(i).writeLong(a.waitReasons[i]);
            for (long h : a.priorityHistogram) b.writeLong(h);
            int pmc = a.pmcDeltas == null ? 0 : a.pmcDeltas.length;
            b.writeInt(pmc);
            for (int i = 0; i < pmc; i++) b.writeLong(a.pmcDeltas[i]);
            b.writeInt(waits.numWrittenBytes()).raw(waits.backingArray(), 0, waits.numWrittenBytes());
            b.writeLong(a.readyCount).writeLong(a.readySum).writeLong(a.readyMax);
            b.writeInt(a.readiers == null ? 0 : a.readiers.size());
            if (a.readiers != null) {
                for (it.unimi.dsi.fastutil.ints.Int2LongMap.Entry e : a.readiers.int2LongEntrySet()) {
                    b.writeInt(e.getIntKey()).writeLong(e.getLongValue());
                }
            }
            b.writeInt(runs.numWrittenBytes()).raw(runs.backingArray(), 0, runs.numWrittenBytes());
            b.writeBoolean(a.split != null);
            if (a.split != null) a.split.write(b);
        });
        return o.toByteArray();
    }

    /** The window start an accumulator was written with ({@link Long#MIN_VALUE} for a whole-session one). */
    public static long windowStartOf(byte[] value) {
        return FORMAT.read(value, StateReader::readLong);
    }

    public static ThreadStatsAccumulator decode(byte[] bytes) {
        return FORMAT.read(bytes, b -> {
            b.readLong(); // the window start
            ThreadStatsAccumulator a = new ThreadStatsAccumulator();
            a.firstNanos = b.readLong();
            a.lastNanos = b.readLong();
            a.switchIn = b.readLong();
            a.switchOut = b.readLong();
            a.voluntary = b.readLong();
            a.involuntary = b.readLong();
            a.waitReasonBitMap = b.readLong();
            a.waitCount = b.readLong();
            a.waitSum = b.readLong();
            a.waitMin = b.readLong();
            a.waitMax = b.readLong();
            a.ticksCount = b.readLong();
            a.ticksSum = b.readLong();
            a.ticksMax = b.readLong();
            a.runCount = b.readLong();
            a.runSum = b.readLong();
            a.runMax = b.readLong();
            a.priorityCount = b.readLong();
            a.prioritySum = b.readLong();
            a.priorityMin = b.readInt();
            a.priorityMax = b.readInt();
            int reasons = b.readInt();
            for (int i = 0; i < reasons; i++) a.waitReasons[b.readInt()] = b.readLong();
            for (int i = 0; i < 32; i++) a.priorityHistogram[i] = b.readLong();
            int pmc = b.readInt();
            if (pmc > 0) {
                a.pmcDeltas = new long[pmc];
                for (int i = 0; i < pmc; i++) a.pmcDeltas[i] = b.readLong();
            }
            a.waits = sketch(b.raw(b.readInt()));
            a.readyCount = b.readLong();
            a.readySum = b.readLong();
            a.readyMax = b.readLong();
            int readiers = b.readInt();
            if (readiers > 0) {
                a.readiers = new it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap(readiers);
                for (int i = 0; i < readiers; i++) a.readiers.put(b.readInt(), b.readLong());
            }
            int runs = b.readInt();
            if (runs > 0) a.runs = sketch(b.raw(runs));
            if (b.readBoolean()) {
                a.split = new ReadySplit();
                a.split.read(b);
            }
            return a;
        });
    }
}
