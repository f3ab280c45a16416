package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.mapping.IndexMappingProtoBinding;
import com.datadoghq.sketch.ddsketch.store.Store;
import com.google.protobuf.InvalidProtocolBufferException;
import java.nio.ByteBuffer;

/**
 * A DDSketch in the form the rows carry: DDSketch's protobuf message, which Datadog's libraries in
 * Java, Python and Go read, so a downstream reader can merge rows itself. The message allows a
 * store's bins as a contiguous run of counts and as a map of index to count, and readers add both.
 * sketches-java's {@code serialize()} always writes one run, zeros included, 8 bytes a bin, so a
 * thread whose waits spread from microseconds to seconds is mostly zeros; here each store takes the
 * run only over the stretch where it pays and the map for the rest. The message is written straight
 * into its bytes (protobuf's wire format: tags, varints, little-endian doubles): the generated
 * builders box every count, and a CodedOutputStream per sketch cost more than the writing.
 */
public final class SketchBytes {
    private SketchBytes() {}

    /** A map entry: its tag and length, the key's tag and varint (2 bytes for our indexes), the count's tag and double. */
    private static final int MAP_ENTRY_BYTES = 14;
    /** A count in the contiguous run: a double, filled or not. */
    private static final int RUN_BIN_BYTES = 8;

    /** A mapping's message, made once per mapping (the rows share one). */
    private record MappingBytes(IndexMapping mapping, byte[] bytes) {}

    private static volatile MappingBytes lastMapping = new MappingBytes(null, null);

    /** A store's filled bins, laid out for writing. */
    private static final class Layout {
        /** The filled bins in ascending order of index, and their counts. */
        int[] index = new int[64];
        double[] count = new double[64];
        int filled;
        /** The bins from index[runFrom] to index[runTo], zeros included, go as the contiguous run. */
        int runFrom;
        int runTo;
        int size;
        double total;

        Layout of(Store store) {
            filled = 0;
            total = 0;
            if (store.isEmpty()) {
                runFrom = 0;
                runTo = -1;
                size = 0;
                return this;
            }
            // at most a bin per index of the range
            int range = store.getMaxIndex() - store.getMinIndex() + 1;
            if (index.length < range) {
                index = new int[Math.max(range, index.length * 2)];
                count = new double[index.length];
            }
            int[] at = index;
            double[] n = count;
            store.forEach((i, c) -> {
                at[filled] = i;
                n[filled++] = c;
            });
            // the run that saves the most against a map entry per filled bin, a maximum-sum stretch (Kadane) over
            // the filled bins: reaching bin k from the one before costs its gap's zeros
            int best = 0;
            long sum = 0;
            int from = 0;
            runFrom = 0;
            runTo = -1;
            for (int k = 0; k < filled; k++) {
                total += n[k];
                long zeros = k == 0 ? 0 : (long) at[k] - at[k - 1] - 1;
                if (k == 0 || sum - RUN_BIN_BYTES * zeros <= 0) {
                    sum = 0;
                    from = k;
                } else {
                    sum -= RUN_BIN_BYTES * zeros;
                }
                sum += MAP_ENTRY_BYTES - RUN_BIN_BYTES;
                if (sum > best) {
                    best = (int) sum;
                    runFrom = from;
                    runTo = k;
                }
            }
            size = 0;
            for (int k = 0; k < filled; k++) if (k < runFrom || k > runTo) size += entrySize(at[k]);
            if (runTo >= runFrom) {
                int run = (at[runTo] - at[runFrom] + 1) * 8;
                int offset = at[runFrom];
                size += 1 + varintSize(run) + run + 1 + varintSize((offset << 1) ^ (offset >> 31));
            }
            return this;
        }

        /** Writes the store as message field {@code field} at {@code p}; returns the position after it. */
        int write(byte[] out, int p, int field) {
            out[p++] = (byte) (field << 3 | LENGTH_DELIMITED);
            p = varint(out, p, size);
            for (int k = 0; k < filled; k++) {
                if (k >= runFrom && k <= runTo) continue;
                int i = index[k];
                out[p++] = 1 << 3 | LENGTH_DELIMITED;
                out[p++] = (byte) (entrySize(i) - 2);
                out[p++] = 1 << 3 | VARINT;
                p = varint(out, p, (i << 1) ^ (i >> 31));
                out[p++] = 2 << 3 | FIXED64;
                DOUBLE.set(out, p, count[k]);
                p += 8;
            }
            if (runTo >= runFrom) {
                out[p++] = 2 << 3 | LENGTH_DELIMITED;
                p = varint(out, p, (index[runTo] - index[runFrom] + 1) * 8);
                for (int k = runFrom; k <= runTo; k++) {
                    // the zeros of the gap before bin k: the array is new, so they are there already
                    if (k > runFrom) p += (index[k] - index[k - 1] - 1) * 8;
                    DOUBLE.set(out, p, count[k]);
                    p += 8;
                }
                int offset = index[runFrom];
                out[p++] = 3 << 3 | VARINT;
                p = varint(out, p, (offset << 1) ^ (offset >> 31));
            }
            return p;
        }

        /** A map entry with its tag and length (both one byte: an entry is at most 17 bytes). */
        private static int entrySize(int index) {
            // the tag and length, the key's tag and sint32 varint, the count's tag and 8 bytes
            return 2 + 1 + varintSize((index << 1) ^ (index >> 31)) + 1 + 8;
        }
    }

    private static final ThreadLocal<Layout[]> LAYOUTS = ThreadLocal.withInitial(() -> new Layout[] {new Layout(), new Layout()});

    /** The sketch's message: its mapping, each store as laid out, and its zero count. */
    public static ByteBuffer of(DDSketch sketch) {
        byte[] mapping = mappingBytes(sketch.getIndexMapping());
        Layout[] l = LAYOUTS.get();
        Layout positive = l[0].of(sketch.getPositiveValueStore());
        Layout negative = l[1].of(sketch.getNegativeValueStore());
        double zero = sketch.getCount() - positive.total - negative.total;
        int size = 1 + varintSize(mapping.length) + mapping.length + 1 + varintSize(positive.size) + positive.size
                + 1 + varintSize(negative.size) + negative.size + (zero != 0 ? 9 : 0);
        byte[] out = new byte[size];
        int p = 0;
        out[p++] = 1 << 3 | LENGTH_DELIMITED;
        p = varint(out, p, mapping.length);
        System.arraycopy(mapping, 0, out, p, mapping.length);
        p = positive.write(out, p + mapping.length, 2);
        p = negative.write(out, p, 3);
        if (zero != 0) {
            out[p++] = 4 << 3 | FIXED64;
            DOUBLE.set(out, p, zero);
            p += 8;
        }
        if (p != size) throw new IllegalStateException("a sketch message of " + p + " bytes where " + size + " were counted");
        return ByteBuffer.wrap(out);
    }

    // protobuf's wire format: a tag is the field number and one of these types
    private static final int VARINT = 0;
    private static final int FIXED64 = 1;
    private static final int LENGTH_DELIMITED = 2;
    private static final java.lang.invoke.VarHandle DOUBLE =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(double[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private static int varintSize(int v) {
        return (v & ~0x7F) == 0 ? 1 : (v & ~0x3FFF) == 0 ? 2 : (v & ~0x1FFFFF) == 0 ? 3 : (v & ~0xFFFFFFF) == 0 ? 4 : 5;
    }

    private static int varint(byte[] out, int p, int v) {
        if ((v & ~0x3FFF) == 0 && (v & ~0x7F) != 0) {
            // two bytes: the bins' indexes and most lengths
            out[p] = (byte) (v & 0x7F | 0x80);
            out[p + 1] = (byte) (v >>> 7);
            return p + 2;
        }
        while ((v & ~0x7F) != 0) {
            out[p++] = (byte) (v & 0x7F | 0x80);
            v >>>= 7;
        }
        out[p++] = (byte) v;
        return p;
    }

    private static byte[] mappingBytes(IndexMapping mapping) {
        MappingBytes last = lastMapping;
        if (last.mapping() != mapping) lastMapping = last = new MappingBytes(mapping, IndexMappingProtoBinding.toProto(mapping).toByteArray());
        return last.bytes();
    }

    /** The sketch {@code bytes} hold, read with the library's protobuf binding; its stores as the accumulators'. */
    public static DDSketch read(ByteBuffer bytes) {
        try {
            return DDSketchProtoBinding.fromProto(ThreadStatsAccumulator::newStore,
                    com.datadoghq.sketch.ddsketch.proto.DDSketch.parseFrom(bytes.duplicate()));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a DDSketch protobuf message: " + e.getMessage(), e);
        }
    }
}
