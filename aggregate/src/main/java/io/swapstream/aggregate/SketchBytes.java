package io.swapstream.aggregate;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketchProtoBinding;
import com.google.protobuf.InvalidProtocolBufferException;
import java.nio.ByteBuffer;

/**
 * A DDSketch in the form the rows carry: DDSketch's protobuf message (sketches-java's
 * {@code serialize()}), which Datadog's libraries in Java, Python and Go read, so a downstream reader
 * can merge rows itself.
 */
public final class SketchBytes {
    private SketchBytes() {}

    public static ByteBuffer of(DDSketch sketch) {
        return sketch.serialize();
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
