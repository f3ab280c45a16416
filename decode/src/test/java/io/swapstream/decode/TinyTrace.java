package io.swapstream.decode;

import io.swapstream.batch.SwitchRow;
import io.swapstream.decode.event.ReadyThread;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Hand-written traces for tests: events placed exactly, payloads laid out byte by byte. */
final class TinyTrace implements AutoCloseable {
    static final long START_FT = 132223104000000000L; // 2020-01-01T00:00:00Z
    static final long START_NS = 1577836800_000_000_000L;
    static final long TS0 = 1000;

    final Path file;
    final EtlWriter w;

    TinyTrace(Path file, int build) throws IOException {
        this.file = file;
        this.w = new EtlWriter(file, new EtlWriter.Session(4096, build, 2, ClockType.PERFCOUNTER, 10_000_000L, 3000,
                START_FT, START_FT - 1, 1, "NT Kernel Logger", "tiny.etl"), TS0);
    }

    /** Unix nanoseconds of raw tick {@code ts} (10 MHz: 100 ns a tick). */
    static long ns(long ts) {
        return START_NS + (ts - TS0) * 100;
    }

    void cswitch(int cpu, long ts, int newTid, int oldTid, int newPri, int oldPri, int state, int reason, int waitTicks) {
        ByteBuffer p = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, newTid).putInt(4, oldTid).put(8, (byte) newPri).put(9, (byte) oldPri);
        p.put(12, (byte) reason).put(13, (byte) 1).put(14, (byte) state).putInt(16, waitTicks);
        w.perfInfoEvent(cpu, 0x0524, 4, ts, null, null, p.array(), 24);
    }

    /**
     * A compact batch logged at {@code flushTs} (its event timestamp): TID table and base
     * priorities as given (rest 0), then packets in hex.
     */
    void compact(int cpu, long flushTs, long firstTs, int[] tids, int[] bases, String packetsHex) {
        byte[] packets = HexFormat.of().parseHex(packetsHex);
        ByteBuffer p = ByteBuffer.allocate(0x58 + packets.length).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(0, firstTs);
        for (int i = 0; i < tids.length; i++) {
            p.putInt(8 + 4 * i, tids[i]);
            p.put(0x48 + i, (byte) bases[i]);
        }
        p.put(0x58, packets);
        w.perfInfoEvent(cpu, 0x0525, 2, flushTs, null, null, p.array(), p.capacity());
    }

    /** A ReadyThread event (0x0532) for {@code tid}, logged on {@code cpu}; flags 1: readied from a DPC. */
    void readyThread(int cpu, long ts, int tid, int adjustReason, int adjustIncrement, int flags) {
        ByteBuffer p = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, tid).put(4, (byte) adjustReason).put(5, (byte) adjustIncrement).put(6, (byte) flags);
        w.perfInfoEvent(cpu, 0x0532, 2, ts, null, null, p.array(), 8);
    }

    void threadEnd(int cpu, long ts, int pid, int tid) {
        thread(cpu, ThreadEvent.END, ts, pid, tid);
    }

    void thread(int cpu, int hookId, long ts, int pid, int tid) {
        ByteBuffer p = ByteBuffer.allocate(72).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(0, pid).putInt(4, tid).put(68, (byte) 8);
        w.systemEvent(cpu, hookId, 3, tid, pid, ts, p.array());
    }

    List<SwitchRow> decode() throws IOException {
        close();
        List<SwitchRow> out = new ArrayList<>();
        SessionDecoder.decodeFile(file, "host1", null, out::add, null);
        return out;
    }

    /**
     * Decodes {@code file} with batches of one row, so switches and thread records come out in the
     * merge's own order, into one list.
     */
    static SessionDecoder decodeInMergeOrder(Path file, List<Object> out) throws IOException {
        SessionDecoder d = new SessionDecoder("host1", null, b -> out.add(b.row(0)), out::add, 1, MergeLimits.live());
        try (io.swapstream.etw.EtlReader r = io.swapstream.etw.EtlReader.open(file)) {
            while (r.next()) d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
        }
        d.finish();
        return d;
    }

    @Override
    public void close() throws IOException {
        w.close();
    }
}
