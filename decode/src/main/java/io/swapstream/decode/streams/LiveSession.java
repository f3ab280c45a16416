package io.swapstream.decode.streams;

import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.EtlFormatException;
import org.apache.kafka.common.KafkaException;

/**
 * A session being decoded in a task's memory: the offline {@link SessionDecoder}, whose batches and
 * thread records go to the stage's outputs. The stores hold what it is rebuilt from: its checkpoint and
 * the buffers since ({@link #restore}).
 */
final class LiveSession {
    final String session;
    final DecodeProgress progress;
    final SessionDecoder decoder;
    private final BufferDecoder buffer = new BufferDecoder();
    private final DecodeOutputs outputs;
    private final DecodeMetrics metrics;
    private final boolean rows;
    /** The timestamp of the input record being taken: its outputs carry it. */
    long timestamp;
    /**
     * Decoding buffers whose outputs went out in a committed transaction, to rebuild the decoder's
     * state: nothing is sent or counted again (exactly-once v2 committed them with the state).
     */
    private boolean replaying;
    /**
     * How many of its buffers the store holds apart (arrived before their turn), so that taking the
     * next buffer in order does not ask the store for one it cannot hold: each such miss reads a
     * block from disk.
     */
    long early;
    /** The session's out-of-order switches counted in the task's metric so far. */
    long outOfOrderCounted;
    /** Bytes of its decoder's last checkpoint, for the metric. */
    long checkpointBytes;
    /** Items its merge held after the last buffer, for the metric. */
    long queued;
    /**
     * Set as a session that ended incomplete sends what its merge held: the time its batches say their times are not
     * known from ({@link io.swapstream.stage.IncompleteFrom}); null while none is marked.
     */
    Long incompleteFrom;

    private LiveSession(String session, DecodeProgress p, byte[] checkpoint, DecodeSettings settings, DecodeOutputs outputs,
                        DecodeMetrics metrics) {
        this.session = session;
        this.progress = p;
        this.outputs = outputs;
        this.metrics = metrics;
        this.rows = settings.rows();
        MergeLimits limits = settings.liveLimits().withFileLateness(p.latenessTicks).withFlushTimer(p.flushTimerMs);
        this.decoder = checkpoint == null
                ? new SessionDecoder(p.host, p.maxWaitReason, this::batch, this::thread, settings.batchRows(), limits)
                : SessionDecoder.restore(checkpoint, p.host, p.maxWaitReason, this::batch, this::thread, settings.batchRows(), limits);
    }

    /**
     * The session with progress {@code p} as the stores hold it: from its last checkpoint (the transaction
     * that put it committed the outputs before it too), then the buffers decoded since, again, sending nothing.
     */
    static LiveSession restore(String session, DecodeProgress p, DecodeStores stores, DecodeSettings settings, DecodeOutputs outputs,
                               DecodeMetrics metrics) {
        byte[] checkpoint = p.checkpointNext == 0 ? null : stores.checkpoint(session, p.checkpointParts);
        if (p.checkpointNext > 0 && checkpoint == null) {
            throw new IllegalStateException("session " + session + " has no checkpoint, though its progress says one holds buffers before "
                    + p.checkpointNext);
        }
        LiveSession l = new LiveSession(session, p, checkpoint, settings, outputs, metrics);
        l.replaying = true;
        stores.redo().replay(session, p.checkpointNext, p.next, (i, bytes) -> {
            String source = session + " buffer " + i;
            try {
                l.buffer.loadPublished(source, 0, bytes, 0, bytes.length);
                SessionDecoder.check(l.buffer);
                l.decoder.onBuffer(l.buffer, 0, source);
            } catch (KafkaException e) {
                throw e;
            } catch (RuntimeException e) {
                // a dead letter the first time round (one that failed the decoder ended its session)
            }
        });
        l.replaying = false;
        l.queued = l.decoder.queued();
        l.outOfOrderCounted = l.decoder.counters().switchesOutOfOrder;
        l.early = stores.earlyCount(session);
        return l;
    }

    /** Loads and checks a buffer published from {@code offset} of its file: whatever it throws, nothing has changed. */
    void load(byte[] bytes, long offset, String source) {
        buffer.loadPublished(source, offset, bytes, 0, bytes.length);
        SessionDecoder.check(buffer);
    }

    /**
     * Decodes the buffer {@link #load} took. An {@link EtlFormatException} changes nothing (a session's first
     * buffer that the decoder refuses: no logfile header, a clock it cannot read); anything else may leave
     * the decoder half way.
     */
    void take(long offset, String source) {
        decoder.onBuffer(buffer, offset, source);
        long outOfOrder = decoder.counters().switchesOutOfOrder;
        if (outOfOrder > outOfOrderCounted) {
            metrics.switchesOutOfOrder.record(outOfOrder - outOfOrderCounted);
            outOfOrderCounted = outOfOrder;
        }
        queued = decoder.queued();
    }

    /** The decoder's checkpoint, taken now. */
    byte[] checkpoint() {
        byte[] state = decoder.checkpoint();
        checkpointBytes = state.length;
        return state;
    }

    private void batch(SwitchBatch b) {
        if (replaying) return;
        if (incompleteFrom == null && decoder.prematureReleases() > 0) {
            // the merge let switches out before every processor had passed them: past the time known now, nothing
            // derived is sure, so this batch and every later one say so, and the aggregate marks the windows after it
            incompleteFrom = decoder.knownUntilNanos();
        }
        progress.switches += b.count();
        metrics.switchesOut.record(b.count());
        outputs.batch(session, b, progress.batches++, timestamp, incompleteFrom);
        if (rows) for (int i = 0; i < b.count(); i++) outputs.contextSwitch(session, AvroRecords.of(b.row(i)), timestamp, incompleteFrom);
    }

    private void thread(ThreadLabel t) {
        if (replaying) return;
        progress.threads++;
        outputs.thread(session, AvroRecords.of(t), timestamp);
    }
}
