package io.swapstream.decode.streams;

import io.swapstream.schemas.state.StateFields;
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

    private static final StateFields<DecodeProgress> FIELDS = new StateFields<DecodeProgress>()
            .nullableString(p -> p.host, (p, v) -> p.host = v)
            .nullableInt(p -> p.maxWaitReason, (p, v) -> p.maxWaitReason = v)
            .longField(p -> p.latenessTicks, (p, v) -> p.latenessTicks = v)
            .longField(p -> p.flushTimerMs, (p, v) -> p.flushTimerMs = v)
            .longField(p -> p.next, (p, v) -> p.next = v)
            .longField(p -> p.checkpointNext, (p, v) -> p.checkpointNext = v)
            .longField(p -> p.checkpoints, (p, v) -> p.checkpoints = v)
            .intField(p -> p.checkpointParts, (p, v) -> p.checkpointParts = v)
            .longField(p -> p.redoBytes, (p, v) -> p.redoBytes = v)
            .longField(p -> p.switches, (p, v) -> p.switches = v)
            .longField(p -> p.batches, (p, v) -> p.batches = v)
            .longField(p -> p.threads, (p, v) -> p.threads = v)
            .longField(p -> p.deadLetters, (p, v) -> p.deadLetters = v)
            .strings(p -> p.lossReasons, 2000)
            .booleanField(p -> p.sessionEmitted, (p, v) -> p.sessionEmitted = v)
            .longField(p -> p.lastBufferMs, (p, v) -> p.lastBufferMs = v)
            .nullableString(p -> p.endReason, (p, v) -> p.endReason = v)
            .longField(p -> p.endedMs, (p, v) -> p.endedMs = v)
            .lastIfPresent(p -> p.stream, (p, v) -> p.stream = v); // none from release 0.1.0

    byte[] encode() {
        return FORMAT.write(o -> FIELDS.write(this, o));
    }

    static DecodeProgress decode(byte[] b) {
        DecodeProgress p = new DecodeProgress();
        return b == null ? p : FORMAT.read(b, in -> FIELDS.read(p, in));
    }
}
