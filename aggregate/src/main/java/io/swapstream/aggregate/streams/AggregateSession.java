package io.swapstream.aggregate.streams;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * What the aggregate stage knows of one session besides its accumulators, committed with its
 * outputs: how many switches and thread records arrived against what the decode stage says it
 * sent, how the session ended, and the statistics' carried state (open window, PMC baselines).
 */
final class AggregateSession {
    /** 4 adds when the session ended; 3 the batch sequence and the session record's offset; 2 the last batch's offset. */
    static final int VERSION = 4;

    String host;
    long switches;
    long threads;
    /** From the decode stage's end-of-session record; -1 until then. */
    long expectedSwitches = -1;
    long expectedThreads = -1;
    String endReason;
    boolean done;
    long lateBatches;
    /** Batches taken; those from {@link #flushedBatches} on are in the redo store, their effect not yet in the accumulators'. */
    long batches;
    long flushedBatches;
    long redoBytes;
    /** SessionStatistics.writeState. */
    byte[] statistics = new byte[0];
    /** Where the last batch taken sat in the switch-batches topic (-1: none, or state written before version 2): where a look for skipped ones starts. */
    int lastBatchPartition = -1;
    long lastBatchOffset = -1;
    /**
     * The decode stage's number of the next batch to take ({@code batch-sequence} header): one below
     * it was taken, one above it means batches in between were skipped. -1: not known (state written
     * before version 3), until a numbered batch comes.
     */
    long nextSequence;
    /** The offset in the sessions topic of the last session record taken (-1: none). */
    long lastSessionRecordOffset = -1;
    /** Wall-clock time the session ended here, for its retention (0: not known, state written before version 4). */
    long endedMs;

    boolean allArrived() {
        return !done && expectedSwitches >= 0 && switches >= expectedSwitches && threads >= expectedThreads;
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + statistics.length);
        try (DataOutputStream o = new DataOutputStream(bytes)) {
            o.writeByte(VERSION);
            o.writeUTF(host == null ? "" : host);
            o.writeLong(switches);
            o.writeLong(threads);
            o.writeLong(expectedSwitches);
            o.writeLong(expectedThreads);
            o.writeUTF(endReason == null ? "" : endReason);
            o.writeBoolean(done);
            o.writeLong(lateBatches);
            o.writeLong(batches);
            o.writeLong(flushedBatches);
            o.writeLong(redoBytes);
            o.writeInt(statistics.length);
            o.write(statistics);
            o.writeInt(lastBatchPartition);
            o.writeLong(lastBatchOffset);
            o.writeLong(nextSequence);
            o.writeLong(lastSessionRecordOffset);
            o.writeLong(endedMs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static AggregateSession decode(byte[] b) {
        AggregateSession s = new AggregateSession();
        if (b == null) return s;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            int version = in.readUnsignedByte();
            if (version < 1 || version > VERSION) {
                throw new IllegalStateException("aggregate session state version " + version + " is not 1 to " + VERSION);
            }
            String host = in.readUTF();
            s.host = host.isEmpty() ? null : host;
            s.switches = in.readLong();
            s.threads = in.readLong();
            s.expectedSwitches = in.readLong();
            s.expectedThreads = in.readLong();
            String end = in.readUTF();
            s.endReason = end.isEmpty() ? null : end;
            s.done = in.readBoolean();
            s.lateBatches = in.readLong();
            s.batches = in.readLong();
            s.flushedBatches = in.readLong();
            s.redoBytes = in.readLong();
            s.statistics = new byte[in.readInt()];
            in.readFully(s.statistics);
            if (version >= 2) {
                s.lastBatchPartition = in.readInt();
                s.lastBatchOffset = in.readLong();
            }
            if (version >= 3) {
                s.nextSequence = in.readLong();
                s.lastSessionRecordOffset = in.readLong();
            } else {
                s.nextSequence = s.batches > 0 ? -1 : 0;
            }
            if (version >= 4) s.endedMs = in.readLong();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return s;
    }
}
