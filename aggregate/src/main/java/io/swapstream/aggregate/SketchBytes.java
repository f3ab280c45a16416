package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import com.google.protobuf.InvalidProtocolBufferException;
import java.nio.ByteBuffer;

/**
 * A DDSketch in the form the rows carry: DDSketch's protobuf message, which Datadog's libraries in
 * Java, Python and Go read, so a downstream reader can merge rows itself. The message allows a
 * store's bins as a contiguous run of counts or as a map of index to count, and readers take both;
 * sketches-java's {@code serialize()} always writes the run, zeros included, so a thread whose
 * waits spread from microseconds to seconds with few bins filled is written as the map.
 */
public final class SketchBytes {
    private SketchBytes() {}

    /** A map entry: its tag and length, the key's tag and varint (2 bytes for our indexes), the count's tag and double. */
    private static final int MAP_ENTRY_BYTES = 14;
    /** A count in the contiguous run: a double, filled or not. */
    private static final int RUN_BIN_BYTES = 8;

    /**
     * The sketch's message with each store's bins split the cheapest way: a contiguous run over the
     * stretch where bins are filled densely enough, and a map for the rest (outliers, sparse tails).
     */
    public static ByteBuffer of(DDSketch sketch) {
        com.datadoghq.sketch.ddsketch.proto.DDSketch.Builder proto = DDSketchProtoBinding.toProto(sketch).toBuilder();
        proto.setPositiveValues(store(sketch.getPositiveValueStore()));
        proto.setNegativeValues(store(sketch.getNegativeValueStore()));
        return ByteBuffer.wrap(proto.build().toByteArray());
    }

    private static com.datadoghq.sketch.ddsketch.proto.Store store(com.datadoghq.sketch.ddsketch.store.Store store) {
        com.datadoghq.sketch.ddsketch.proto.Store.Builder b = com.datadoghq.sketch.ddsketch.proto.Store.newBuilder();
        if (store.isEmpty()) return b.build();
        int min = store.getMinIndex();
        int max = store.getMaxIndex();
        double[] counts = new double[max - min + 1];
        store.forEach((index, count) -> counts[index - min] += count);
        // the run that saves the most against a map entry per filled bin: a maximum-sum stretch (Kadane)
        long best = 0;
        int bestFrom = 0;
        int bestTo = -1;
        long sum = 0;
        int from = 0;
        for (int i = 0; i < counts.length; i++) {
            if (sum <= 0) {
                sum = 0;
                from = i;
            }
            sum += (counts[i] != 0 ? MAP_ENTRY_BYTES : 0) - RUN_BIN_BYTES;
            if (sum > best) {
                best = sum;
                bestFrom = from;
                bestTo = i;
            }
        }
        if (bestTo >= bestFrom) {
            b.setContiguousBinIndexOffset(min + bestFrom);
            for (int i = bestFrom; i <= bestTo; i++) b.addContiguousBinCounts(counts[i]);
        }
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] != 0 && (i < bestFrom || i > bestTo)) b.putBinCounts(min + i, counts[i]);
        }
        return b.build();
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
