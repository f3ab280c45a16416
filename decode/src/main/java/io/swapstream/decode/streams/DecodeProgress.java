package io.swapstream.decode.streams;

import io.swapstream.schemas.state.StateFormat;
import java.util.ArrayList;
import java.util.List;

/**
 * What the decode stage knows of one session besides its decoder's checkpoint, committed with its
 * outputs: the next buffer it expects, where its last checkpoint is, what it emitted, what was lost
 * and why, when it last heard of the session, and whether it has ended. Small: the idle timeout
 * scans all of them.
 */
final class DecodeProgress {
    static final StateFormat FORMAT = new StateFormat("decode session progress", 7);

    String host;
    Integer maxWaitReason;
    /** The finished file's largest buffer lateness in clock ticks, as its ingester sent it; -1 for a live session. */
    long latenessTicks = -1;
    /** The logger's flush timer as the ingester declared it, ms; -1 for none. */
    long flushTimerMs = -1;
    /** The index of the next buffer to decode; buffers before it were taken. */
    long next;
    /** The decoder's last checkpoint holds buffers before this index; the buffers from here to {@link #next} are in the redo store. */
    long checkpointNext;
    /** Checkpoints taken. */
    long checkpoints;
    /** The parts the last checkpoint was written in. */
    int checkpointParts;
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
    /**
     * The stream of buffers that began the session (the ingester's {@code stream} header), which alone may
     * go on with it; null for a session begun by an ingester that sent none. Written after every field of
     * release 0.1.0, which reads the rest of a value and leaves what follows: both releases read either.
     */
    String stream;

    boolean ended() { return endReason != null; }

    /** Notes why something was lost (the first ten reasons are kept). */
    void lost(String reason) {
        if (lossReasons.size() < 10) lossReasons.add(reason);
    }

    byte[] encode() {
        return FORMAT.write(o -> {
            o.nullableString(host);
            o.nullableInt(maxWaitReason);
            o.writeLong(latenessTicks);
            o.writeLong(flushTimerMs);
            o.writeLong(next);
            o.writeLong(checkpointNext);
            o.writeLong(checkpoints);
            o.writeInt(checkpointParts);
            o.writeLong(redoBytes);
            o.writeLong(switches);
            o.writeLong(batches);
            o.writeLong(threads);
            o.writeLong(deadLetters);
            o.writeInt(lossReasons.size());
            for (String r : lossReasons) o.string(r.length() > 2000 ? r.substring(0, 2000) : r);
            o.writeBoolean(sessionEmitted);
            o.writeLong(lastBufferMs);
            o.nullableString(endReason);
            o.writeLong(endedMs);
            o.nullableString(stream);
        });
    }

    static DecodeProgress decode(byte[] b) {
        DecodeProgress p = new DecodeProgress();
        if (b == null) return p;
        return FORMAT.read(b, in -> {
            p.host = in.nullableString();
            p.maxWaitReason = in.nullableInt();
            p.latenessTicks = in.readLong();
            p.flushTimerMs = in.readLong();
            p.next = in.readLong();
            p.checkpointNext = in.readLong();
            p.checkpoints = in.readLong();
            p.checkpointParts = in.readInt();
            p.redoBytes = in.readLong();
            p.switches = in.readLong();
            p.batches = in.readLong();
            p.threads = in.readLong();
            p.deadLetters = in.readLong();
            for (int n = in.readInt(); n > 0; n--) p.lossReasons.add(in.string());
            p.sessionEmitted = in.readBoolean();
            p.lastBufferMs = in.readLong();
            p.endReason = in.nullableString();
            p.endedMs = in.readLong();
            p.stream = in.remaining() > 0 ? in.nullableString() : null; // none from release 0.1.0
            return p;
        });
    }
}
