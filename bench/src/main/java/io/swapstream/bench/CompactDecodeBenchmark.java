package io.swapstream.bench;

import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.CompactSwitchSink;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/** Decodes compact batches of mixed packet kinds; the score is packets per second on one core. */
public class CompactDecodeBenchmark extends GeneratedTraceBenchmark {
    static final int BATCHES = 64;
    static final int PACKETS_PER_BATCH = 180;

    private ByteBuffer data;
    private int[] offsets;
    private int[] lengths;

    @Setup
    public void build() {
        Random rnd = new Random(1);
        data = ByteBuffer.allocate(BATCHES * 0x400).order(ByteOrder.LITTLE_ENDIAN);
        offsets = new int[BATCHES];
        lengths = new int[BATCHES];
        int p = 0;
        for (int b = 0; b < BATCHES; b++) {
            offsets[b] = p;
            for (int i = 0; i < 16; i++) data.putInt(p + 8 + 4 * i, 100 + 4 * i);
            int q = p + CompactBatchDecoder.HEADER_SIZE;
            for (int k = 0; k < PACKETS_PER_BATCH; k++) {
                switch (k % 4) {
                    case 0 -> { data.putShort(q, (short) (rnd.nextInt(1 << 14) << 2)); q += 2; }
                    case 1 -> { data.putInt(q, 2 | rnd.nextInt(16) << 2 | 0x28 << 9 | rnd.nextInt(1 << 17) << 15); q += 4; }
                    case 2 -> { data.putInt(q, 3 | rnd.nextInt(1 << 20) << 2); data.putInt(q + 4, rnd.nextInt(16) | 15 << 4 | 8 << 10 | 5 << 15); q += 8; }
                    default -> { data.putInt(q, 1 | rnd.nextInt(1 << 20) << 2); q += 4; }
                }
            }
            lengths[b] = q - p;
            p = q;
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES * PACKETS_PER_BATCH)
    public void decode(Blackhole bh) {
        CompactSwitchSink sink = (k, ts, tid, pri, st, wr, w, i) -> bh.consume(ts + tid + pri + st + wr + w);
        for (int b = 0; b < BATCHES; b++) {
            CompactBatchDecoder.decode(data, offsets[b], lengths[b], 0x28, sink);
        }
    }
}
