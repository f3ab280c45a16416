package io.swapstream.decode.streams;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the decode stage knows of one session besides its decoder's checkpoint, committed with its
 * outputs: the next buffer it expects, what it emitted, what was lost and why, when it last heard
 * of the session, and whether the session has ended. Small: the idle timeout scans all of them.
 */
final class DecodeProgress {
    /**
     * 4 adds the file's lateness; 3 the checkpoint before the last; 2 the last input record taken in
     * order (1 is read as not knowing it).
     */
    static final int VERSION = 4;

    String host;
    Integer maxWaitReason;
    /** The finished file's largest buffer lateness in clock ticks, as its ingester sent it; -1 for a live session. */
    long latenessTicks = -1;
    /** The index of the next buffer to decode; buffers before it were taken. */
    long next;
    /** The decoder checkpoint holds buffers before this index. */
    long checkpointNext;
    /**
     * The checkpoint before it holds buffers before this index (0: none, the session's start); the
     * buffers from here to {@link #next} are in the redo store. Read from a version 2 record: the
     * last checkpoint's.
     */
    long previousCheckpointNext;
    /** Checkpoints taken: the n-th sits in one of two keys by n's parity, so the one before the last is never copied. */
    long checkpoints;
    /** Bytes of those buffers. */
    long redoBytes;
    long switches;
    long batches;
    long threads;
    long deadLetters;
    final List<String> lossReasons = new ArrayList<>();
    boolean sessionEmitted;
    /** Wall-clock time of the session's latest buffer. */
    long lastBufferMs;
    /** Null while the session runs; {@code end-marker} or {@code idle-timeout} once it has ended. */
    String endReason;
    long endedMs;
    /**
     * The input partition and offset of the last buffer taken in order, -1 when not known: a gap
     * after it is looked for in the input topic before buffers are held apart.
     */
    int lastInputPartition = -1;
    long lastInput = -1;

    boolean ended() { return endReason != null; }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream o = new DataOutputStream(bytes)) {
            o.writeByte(VERSION);
            o.writeUTF(host == null ? "" : host);
            o.writeInt(maxWaitReason == null ? -1 : maxWaitReason);
            o.writeLong(next);
            o.writeLong(checkpointNext);
            o.writeLong(redoBytes);
            o.writeLong(switches);
            o.writeLong(batches);
            o.writeLong(threads);
            o.writeLong(deadLetters);
            o.writeInt(lossReasons.size());
            for (String r : lossReasons) o.writeUTF(r.length() > 2000 ? r.substring(0, 2000) : r);
            o.writeBoolean(sessionEmitted);
            o.writeLong(lastBufferMs);
            o.writeUTF(endReason == null ? "" : endReason);
            o.writeLong(endedMs);
            o.writeInt(lastInputPartition);
            o.writeLong(lastInput);
            o.writeLong(previousCheckpointNext);
            o.writeLong(checkpoints);
            o.writeLong(latenessTicks);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static DecodeProgress decode(byte[] b) {
        DecodeProgress p = new DecodeProgress();
        if (b == null) return p;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            int version = in.readUnsignedByte();
            if (version < 1 || version > VERSION) {
                throw new IllegalStateException("decode progress version " + version + " is not 1 to " + VERSION);
            }
            p.host = in.readUTF();
            int mwr = in.readInt();
            p.maxWaitReason = mwr < 0 ? null : mwr;
            p.next = in.readLong();
            p.checkpointNext = in.readLong();
            p.redoBytes = in.readLong();
            p.switches = in.readLong();
            p.batches = in.readLong();
            p.threads = in.readLong();
            p.deadLetters = in.readLong();
            for (int n = in.readInt(); n > 0; n--) p.lossReasons.add(in.readUTF());
            p.sessionEmitted = in.readBoolean();
            p.lastBufferMs = in.readLong();
            String end = in.readUTF();
            p.endReason = end.isEmpty() ? null : end;
            p.endedMs = in.readLong();
            if (version >= 2) {
                p.lastInputPartition = in.readInt();
                p.lastInput = in.readLong();
            }
            p.previousCheckpointNext = version >= 3 ? in.readLong() : p.checkpointNext;
            // a version 2 session's one checkpoint is where the first one goes
            p.checkpoints = version >= 3 ? in.readLong() : p.checkpointNext > 0 ? 1 : 0;
            p.latenessTicks = version >= 4 ? in.readLong() : -1;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }
}
