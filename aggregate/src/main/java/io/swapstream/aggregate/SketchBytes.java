package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.mapping.IndexMappingProtoBinding;
import com.datadoghq.sketch.ddsketch.store.Store;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A DDSketch in the form the rows carry: DDSketch's protobuf message, which Datadog's libraries in
 * Java, Python and Go read, so a downstream reader can merge rows itself. The message allows a
 * store's bins as a contiguous run of counts and as a map of index to count, and readers add both.
 * sketches-java's {@code serialize()} always writes one run, zeros included, 8 bytes a bin, so a
 * thread whose waits spread from microseconds to seconds is mostly zeros; here each store takes the
 * run only over the stretch where it pays and the map for the rest. Written with protobuf's
 * {@link CodedOutputStream}: the generated builders box every count.
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

    /** A store's bins, laid out for writing. */
    private static final class Layout {
        int min;
        double[] counts = new double[0];
        int length;
        int runFrom;
        int runTo = -1;
        int size;
        /** The store's count, summed from the bins laid out. */
        double total;

        Layout of(Store store) {
            runFrom = 0;
            runTo = -1;
            length = 0;
            size = 0;
            total = 0;
            if (store.isEmpty()) return this;
            min = store.getMinIndex();
            length = store.getMaxIndex() - min + 1;
            if (counts.length < length) counts = new double[Math.max(length, counts.length * 2)];
            Arrays.fill(counts, 0, length, 0);
            store.forEach((index, count) -> counts[index - min] += count);
            total = 0;
            for (int i = 0; i < length; i++) total += counts[i];
            // the run that saves the most against a map entry per filled bin: a maximum-sum stretch (Kadane)
            long best = 0;
            long sum = 0;
            int from = 0;
            for (int i = 0; i < length; i++) {
                if (sum <= 0) {
                    sum = 0;
                    from = i;
                }
                sum += (counts[i] != 0 ? MAP_ENTRY_BYTES : 0) - RUN_BIN_BYTES;
                if (sum > best) {
                    best = sum;
                    runFrom = from;
                    runTo = i;
                }
            }
            for (int i = 0; i < length; i++) if (counts[i] != 0 && (i < runFrom || i > runTo)) size += entrySize(min + i);
            if (runTo >= runFrom) {
                int run = (runTo - runFrom + 1) * 8;
                size += 1 + CodedOutputStream.computeUInt32SizeNoTag(run) + run + CodedOutputStream.computeSInt32Size(3, min + runFrom);
            }
            return this;
        }

        void write(CodedOutputStream o, int field) throws IOException {
            o.writeTag(field, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            o.writeUInt32NoTag(size);
            for (int i = 0; i < length; i++) {
                if (counts[i] == 0 || i >= runFrom && i <= runTo) continue;
                o.writeTag(1, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
                o.writeUInt32NoTag(entrySize(min + i) - 2);
                o.writeSInt32(1, min + i);
                o.writeDouble(2, counts[i]);
            }
            if (runTo >= runFrom) {
                o.writeTag(2, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
                o.writeUInt32NoTag((runTo - runFrom + 1) * 8);
                for (int i = runFrom; i <= runTo; i++) o.writeDoubleNoTag(counts[i]);
                o.writeSInt32(3, min + runFrom);
            }
        }

        /** A map entry with its tag and length (both one byte: an entry is at most 17 bytes). */
        private static int entrySize(int index) {
            int zigzag = (index << 1) ^ (index >> 31);
            int varint = (zigzag & ~0x7F) == 0 ? 1 : (zigzag & ~0x3FFF) == 0 ? 2 : (zigzag & ~0x1FFFFF) == 0 ? 3 : (zigzag & ~0xFFFFFFF) == 0 ? 4 : 5;
            // the tag and length, the key's tag and varint, the count's tag and 8 bytes
            return 2 + 1 + varint + 1 + 8;
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
        int size = 1 + CodedOutputStream.computeUInt32SizeNoTag(mapping.length) + mapping.length
                + 1 + CodedOutputStream.computeUInt32SizeNoTag(positive.size) + positive.size
                + 1 + CodedOutputStream.computeUInt32SizeNoTag(negative.size) + negative.size
                + (zero != 0 ? CodedOutputStream.computeDoubleSize(4, zero) : 0);
        byte[] out = new byte[size];
        try {
            CodedOutputStream o = CodedOutputStream.newInstance(out);
            o.writeTag(1, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
            o.writeUInt32NoTag(mapping.length);
            o.writeRawBytes(mapping);
            positive.write(o, 2);
            negative.write(o, 3);
            if (zero != 0) o.writeDouble(4, zero);
            o.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ByteBuffer.wrap(out);
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
