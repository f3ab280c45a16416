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
 * outputs: the next buffer it expects, where its last checkpoint is, what it emitted, what was lost
 * and why, when it last heard of the session, and whether it has ended. Small: the idle timeout
 * scans all of them.
 */
final class DecodeProgress {
    /** The format; a reader refuses others (nothing released was written in another). */
    static final int VERSION = 5;

    String host;
    Integer maxWaitReason;
    /** The finished file's largest buffer lateness in clock ticks, as its ingester sent it; -1 for a live session. */
    long latenessTicks = -1;
    /** The index of the next buffer to decode; buffers before it were taken. */
    long next;
    /** The decoder's last checkpoint holds buffers before this index; the buffers from here to {@link #next} are in the redo store. */
    long checkpointNext;
    /** Checkpoints taken. */
    long checkpoints;
    /** Bytes of the buffers since the last checkpoint. */
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

    boolean ended() { return endReason != null; }

    /** Notes why something was lost (the first ten reasons are kept). */
    void lost(String reason) {
        if (lossReasons.size() < 10) lossReasons.add(reason);
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream o = new DataOutputStream(bytes)) {
            o.writeByte(VERSION);
            o.writeUTF(host == null ? "" : host);
            o.writeInt(maxWaitReason == null ? -1 : maxWaitReason);
            o.writeLong(latenessTicks);
            o.writeLong(next);
            o.writeLong(checkpointNext);
            o.writeLong(checkpoints);
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
            if (version != VERSION) throw new IllegalStateException("decode progress version " + version + " is not " + VERSION);
            p.host = in.readUTF();
            int mwr = in.readInt();
            p.maxWaitReason = mwr < 0 ? null : mwr;
            p.latenessTicks = in.readLong();
            p.next = in.readLong();
            p.checkpointNext = in.readLong();
            p.checkpoints = in.readLong();
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
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }
}
