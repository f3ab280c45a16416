package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.encoding.ByteArrayInput;
import com.datadoghq.sketch.ddsketch.encoding.GrowingByteArrayOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * ThreadStatsAccumulator to bytes and back, for state stores (the sketches in DDSketch's own
 * encoding, more compact than its protobuf form the rows carry). One format: nothing released holds another.
 */
public final class AccumulatorCodec {
    private AccumulatorCodec() {}

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

    private static DDSketch sketch(ByteBuffer b, int n) {
        byte[] bytes = new byte[n];
        b.get(bytes);
        try {
            return DDSketch.decode(ByteArrayInput.wrap(bytes), ThreadStatsAccumulator::newStore);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] encode(ThreadStatsAccumulator a) {
        GrowingByteArrayOutput[] scratch = SCRATCH.get();
        GrowingByteArrayOutput waits = sketch(a.waits, scratch[0]);
        GrowingByteArrayOutput readies = sketch(a.readies, scratch[1]);
        GrowingByteArrayOutput runs = sketch(a.runs, scratch[2]);
        int readiers = a.readiers == null ? 0 : a.readiers.size();
        int reasons = 0;
        for (long r : a.waitReasons) if (r != 0) reasons++;
        int pmc = a.pmcDeltas == null ? 0 : a.pmcDeltas.length;
        ByteBuffer b = ByteBuffer.allocate(8 * 19 + 4 * 2 + 4 + 12 * reasons + 8 * 32 + 4 + 8 * pmc + 4 + waits.numWrittenBytes()
                + 8 * 3 + 4 + readies.numWrittenBytes() + 4 + 12 * readiers + 4 + runs.numWrittenBytes());
        b.putLong(a.firstNanos).putLong(a.lastNanos).putLong(a.switchIn).putLong(a.switchOut).putLong(a.voluntary)
                .putLong(a.involuntary).putLong(a.waitReasonBitMap).putLong(a.waitCount).putLong(a.waitSum)
                .putLong(a.waitMin).putLong(a.waitMax).putLong(a.ticksCount).putLong(a.ticksSum).putLong(a.ticksMax)
                .putLong(a.runCount).putLong(a.runSum).putLong(a.runMax).putLong(a.priorityCount).putLong(a.prioritySum)
                .putInt(a.priorityMin).putInt(a.priorityMax);
        b.putInt(reasons);
        for (int i = 0; i < a.waitReasons.length; i++) if (a.waitReasons[i] != 0) b.putInt(i).putLong(a.waitReasons[i]);
        for (long h : a.priorityHistogram) b.putLong(h);
        b.putInt(pmc);
        for (int i = 0; i < pmc; i++) b.putLong(a.pmcDeltas[i]);
        b.putInt(waits.numWrittenBytes()).put(waits.backingArray(), 0, waits.numWrittenBytes());
        b.putLong(a.readyCount).putLong(a.readySum).putLong(a.readyMax);
        b.putInt(readies.numWrittenBytes()).put(readies.backingArray(), 0, readies.numWrittenBytes());
        b.putInt(readiers);
        if (a.readiers != null) {
            for (it.unimi.dsi.fastutil.ints.Int2LongMap.Entry e : a.readiers.int2LongEntrySet()) {
                b.putInt(e.getIntKey()).putLong(e.getLongValue());
            }
        }
        b.putInt(runs.numWrittenBytes()).put(runs.backingArray(), 0, runs.numWrittenBytes());
        if (b.hasRemaining()) throw new IllegalStateException("accumulator encoding sized wrong: " + b.remaining() + " bytes left");
        return b.array();
    }

    public static ThreadStatsAccumulator decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        ThreadStatsAccumulator a = new ThreadStatsAccumulator();
        a.firstNanos = b.getLong();
        a.lastNanos = b.getLong();
        a.switchIn = b.getLong();
        a.switchOut = b.getLong();
        a.voluntary = b.getLong();
        a.involuntary = b.getLong();
        a.waitReasonBitMap = b.getLong();
        a.waitCount = b.getLong();
        a.waitSum = b.getLong();
        a.waitMin = b.getLong();
        a.waitMax = b.getLong();
        a.ticksCount = b.getLong();
        a.ticksSum = b.getLong();
        a.ticksMax = b.getLong();
        a.runCount = b.getLong();
        a.runSum = b.getLong();
        a.runMax = b.getLong();
        a.priorityCount = b.getLong();
        a.prioritySum = b.getLong();
        a.priorityMin = b.getInt();
        a.priorityMax = b.getInt();
        int reasons = b.getInt();
        for (int i = 0; i < reasons; i++) a.waitReasons[b.getInt()] = b.getLong();
        for (int i = 0; i < 32; i++) a.priorityHistogram[i] = b.getLong();
        int pmc = b.getInt();
        if (pmc > 0) {
            a.pmcDeltas = new long[pmc];
            for (int i = 0; i < pmc; i++) a.pmcDeltas[i] = b.getLong();
        }
        a.waits = sketch(b, b.getInt());
        a.readyCount = b.getLong();
        a.readySum = b.getLong();
        a.readyMax = b.getLong();
        int n = b.getInt();
        if (n > 0) a.readies = sketch(b, n);
        int readiers = b.getInt();
        if (readiers > 0) {
            a.readiers = new it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap(readiers);
            for (int i = 0; i < readiers; i++) a.readiers.put(b.getInt(), b.getLong());
        }
        int runs = b.getInt();
        if (runs > 0) a.runs = sketch(b, runs);
        return a;
    }
}
