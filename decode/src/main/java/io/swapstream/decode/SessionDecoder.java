package io.swapstream.decode;

import io.swapstream.batch.SessionFacts;
import io.swapstream.batch.SwitchBatch;
import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.ThreadLabel;
import io.swapstream.decode.event.CSwitchEvent;
import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.MalformedEventException;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.decode.merge.ExpansionCounters;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.decode.merge.SwitchExpander;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import io.swapstream.etw.TraceEvent;
import io.swapstream.schemas.state.StateFormat;
import io.swapstream.schemas.state.StateReader;
import io.swapstream.schemas.state.StateWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Decodes one session buffer by buffer: the first buffer's logfile header sets the clock and
 * MaximumWaitReason, every event goes to a {@link SwitchExpander}, and the switches come out as
 * {@link SwitchBatch}es, the rows of each buffer handed over by the end of it. Serves the offline
 * commands (a file) and the decode stream (one raw buffer per record) alike; its whole state is a
 * {@link #checkpoint()}, so the stream continues after a restart without the buffers before it.
 */
public final class SessionDecoder {
    /** The checkpoint's format. */
    static final StateFormat CHECKPOINT = new StateFormat("decoder checkpoint", 5);

    private final String host;
    private final Integer maximumWaitReasonOverride;
    private final Consumer<SwitchBatch> batches;
    private final Consumer<ThreadLabel> threads;
    private final int batchRows;
    private final MergeLimits limits;
    private LogfileHeader header;
    private SessionFacts session;
    private SessionClock clock;
    private SwitchExpander expander;
    private BufferDecoder current;
    private long currentOffset;
    private String source;

    /**
     * @param batches takes the switches, a batch at a time (reused: copy what you keep)
     * @param threads takes each thread event's info in time order; may be null
     * @param limits  what the time-ordered merge may wait for: a finished file's lateness or a live session's limits
     */
    public SessionDecoder(String host, Integer maximumWaitReasonOverride, Consumer<SwitchBatch> batches,
                          Consumer<ThreadLabel> threads, int batchRows, MergeLimits limits) {
        this.limits = limits;
        this.host = host;
        this.maximumWaitReasonOverride = maximumWaitReasonOverride;
        this.batches = batches;
        this.threads = threads;
        this.batchRows = batchRows;
    }

    /** Decodes a whole file into rows: for printing and tests. */
    public static SessionDecoder decodeFile(Path file, String host, Integer maximumWaitReasonOverride,
                                            Consumer<SwitchRow> switches, Consumer<ThreadLabel> threads) throws IOException {
        return decodeBatches(file, host, maximumWaitReasonOverride, b -> {
            for (int i = 0; i < b.count(); i++) switches.accept(b.row(i));
        }, threads);
    }

    /** Decodes a whole file into batches. */
    public static SessionDecoder decodeBatches(Path file, String host, Integer maximumWaitReasonOverride,
                                               Consumer<SwitchBatch> batches, Consumer<ThreadLabel> threads) throws IOException {
        try (EtlReader r = EtlReader.open(file)) {
            return decodeBatches(r, host, maximumWaitReasonOverride, batches, threads);
        }
    }

    /**
     * Decodes the whole file {@code reader} reads, a finished session, into batches. It walks the file
     * once first for how late its buffers come (cheap next to decoding): the merge then waits for
     * exactly that, and the switches come out in time order whatever the lateness.
     */
    public static SessionDecoder decodeBatches(EtlReader reader, String host, Integer maximumWaitReasonOverride,
                                               Consumer<SwitchBatch> batches, Consumer<ThreadLabel> threads) throws IOException {
        long lateness = BufferLateness.of(reader).max();
        reader.rewind();
        SessionDecoder d = new SessionDecoder(host, maximumWaitReasonOverride, batches, threads, SwitchExpander.DEFAULT_BATCH_ROWS,
                MergeLimits.finished(lateness));
        while (reader.next()) d.onBuffer(reader.decoder(), reader.bufferOffset(), reader.source());
        String cut = reader.cutShort();
        // a file cut at a buffer's end frames whole; what it lacks would give wrong derived times, unmarked
        if (cut != null) throw new EtlFormatException(reader.source(), reader.length(), cut);
        d.finish();
        return d;
    }

    /** The session, known once the header buffer has been read. */
    public SessionFacts session() { return session; }
    public ExpansionCounters counters() { return expander == null ? new ExpansionCounters() : expander.counters(); }
    /**
     * Switches the merge let out before every processor's buffers had passed them: by its memory cap, or by a live
     * session's maximum lateness (a finished file's own lateness lets none out early). Their derived times, and the
     * windows from them on, may lack what came later (docs/architecture.md "Incomplete sessions").
     */
    public long prematureReleases() {
        ExpansionCounters c = counters();
        return c.queueLimitForced + (limits.finishedFile() ? 0 : c.latenessLimitForced);
    }

    /** Items waiting in the time-ordered merge. */
    public int queued() { return expander == null ? 0 : expander.queued(); }

    /** Bytes the time-ordered merge's queue takes. */
    public long queuedBytes() { return expander == null ? 0 : expander.queuedBytes(); }

    /** The largest lateness of the session's buffers so far, in nanoseconds (0 before the header). */
    public long maxLatenessNanos() {
        return expander == null ? 0 : clock.ticksToNanos(expander.maxLatenessTicks());
    }

    /** How far the merge holds back: the newest event time read minus the newest switch sent on, ns; 0 before either. */
    public long heldBackNanos() {
        if (expander == null) return 0;
        long read = expander.newestReadTimestamp();
        long sent = expander.lastEmittedTimestamp();
        return read == Long.MIN_VALUE || sent == Long.MIN_VALUE || read <= sent ? 0 : clock.ticksToNanos(read - sent);
    }

    /** The Unix time of the latest switch emitted, nanoseconds; {@link Long#MIN_VALUE} before any. */
    public long lastEmittedNanos() {
        if (expander == null) return Long.MIN_VALUE;
        long ts = expander.lastEmittedTimestamp();
        return ts == Long.MIN_VALUE ? Long.MIN_VALUE : clock.toUnixNanos(ts);
    }

    /**
     * The Unix time, ns, up to which every processor's events are in the buffers taken: the earliest of the processors'
     * last events ({@link SwitchExpander#knownUntilTimestamp}); {@link Long#MIN_VALUE} when a processor (one the logfile
     * header counts, or one the trace named) has shown nothing, or before the header. For a session cut short, switches
     * from then on may miss their processors' neighbours and derived times.
     */
    public long knownUntilNanos() {
        if (expander == null) return Long.MIN_VALUE;
        long ts = expander.knownUntilTimestamp();
        return ts == Long.MIN_VALUE ? Long.MIN_VALUE : clock.toUnixNanos(ts);
    }

    /**
     * Takes the buffer loaded in {@code decoder}; its switches are handed over before this returns.
     *
     * @throws EtlFormatException for a malformed event, located in the source
     */
    public void onBuffer(BufferDecoder decoder, long bufferOffset, String source) {
        this.current = decoder;
        this.currentOffset = bufferOffset;
        this.source = source;
        decoder.walk(this::onEvent);
        // the buffers after this one may expand to no more than the logger could have filled
        if (header != null) decoder.loggerBufferSize(header.bufferSize());
        if (expander != null) {
            expander.release(decoder.header().processor());
            expander.flush();
        }
    }

    private void onEvent(TraceEvent ev) {
        if (expander == null) {
            if (!LogfileHeader.isHeaderEvent(ev)) {
                throw current.error(ev.offset(), "the session does not start with a logfile header event");
            }
            start(LogfileHeader.parse(ev, current), ev);
            return;
        }
        try {
            expander.onEvent(ev);
        } catch (MalformedEventException e) {
            throw current.error(ev.offset(), String.format("event 0x%04x: %s", ev.hookId(), e.getMessage()));
        }
    }

    private void start(LogfileHeader h, TraceEvent ev) {
        SessionClock clock;
        try {
            clock = SessionClock.of(h);
        } catch (IllegalArgumentException e) {
            throw new EtlFormatException(source, currentOffset + ev.payloadOffset()
                    + LogfileHeader.clockTypeOffset(ev.pointerSize()), e.getMessage());
        }
        begin(h, clock);
    }

    private void begin(LogfileHeader h, SessionClock clock) {
        header = h;
        this.clock = clock;
        int max = maximumWaitReasonOverride != null ? maximumWaitReasonOverride : MaximumWaitReason.forBuild(h.build());
        session = SessionFacts.of(host, h, max);
        expander = new SwitchExpander(session.session(), host, clock, max, h.numberOfProcessors(), limits, batches, threads,
                batchRows);
    }

    /**
     * Checks the loaded buffer without using it: framing, and every payload the expansion will
     * decode. A buffer that passes is then taken whole by {@link #onBuffer}; one that fails changes
     * nothing.
     *
     * @throws EtlFormatException naming the first bad event
     */
    public static void check(BufferDecoder decoder) {
        decoder.walk(ev -> {
            int hook = ev.hookId();
            try {
                if (hook == CSwitchEvent.HOOK_ID) {
                    CSwitchEvent.check(ev.payloadLength());
                } else if (hook == CompactBatchDecoder.HOOK_ID) {
                    CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(), 0x3F,
                            (k, t, o, pr, st, w, nw, i) -> { });
                } else if (hook >= 0 && ev.headerType().isSystem()) {
                    if (ThreadEvent.handles(hook)) ThreadEvent.decode(ev);
                    else if (ProcessEvent.handles(hook)) ProcessEvent.decode(ev);
                }
            } catch (MalformedEventException e) {
                throw decoder.error(ev.offset(), String.format("event 0x%04x: %s", hook, e.getMessage()));
            }
        });
    }

    /** Ends the session: every processor's last switch, and every row, is handed over. */
    public void finish() {
        if (expander != null) expander.finish();
    }

    /**
     * Everything this decoder holds, as bytes: the logfile header, the merge's lanes and queue, the
     * thread table, counters. Bounded by processors, live threads and what the merge waits for, never by
     * the length of the trace.
     */
    public byte[] checkpoint() {
        StateWriter o = new StateWriter(64 * 1024);
        CHECKPOINT.writeTo(o, out -> {
            out.writeBoolean(header != null);
            if (header != null) {
                writeHeader(out, header);
                expander.writeState(out);
            }
        });
        return o.toByteArray();
    }

    /** A decoder that continues from {@code checkpoint}, handing its output to the given consumers. */
    public static SessionDecoder restore(byte[] checkpoint, String host, Integer maximumWaitReasonOverride,
                                         Consumer<SwitchBatch> batches, Consumer<ThreadLabel> threads, int batchRows) {
        return restore(checkpoint, host, maximumWaitReasonOverride, batches, threads, batchRows, MergeLimits.live());
    }

    /** The same, with the session's merge limits. */
    public static SessionDecoder restore(byte[] checkpoint, String host, Integer maximumWaitReasonOverride,
                                         Consumer<SwitchBatch> batches, Consumer<ThreadLabel> threads, int batchRows,
                                         MergeLimits limits) {
        SessionDecoder d = new SessionDecoder(host, maximumWaitReasonOverride, batches, threads, batchRows, limits);
        CHECKPOINT.read(checkpoint, in -> {
            if (in.readBoolean()) {
                LogfileHeader h = readHeader(in);
                d.begin(h, SessionClock.of(h));
                d.expander.readState(in);
            }
            return d;
        });
        return d;
    }

    private static void writeHeader(StateWriter o, LogfileHeader h) {
        o.writeInt(h.bufferSize());
        o.writeByte(h.majorVersion());
        o.writeByte(h.minorVersion());
        o.writeByte(h.subVersion());
        o.writeByte(h.subMinorVersion());
        o.writeInt(h.providerVersion());
        o.writeInt(h.numberOfProcessors());
        o.writeLong(h.endTime());
        o.writeInt(h.timerResolution());
        o.writeInt(h.maximumFileSize());
        o.writeInt(h.logFileMode());
        o.writeInt(h.buffersWritten());
        o.writeInt(h.startBuffers());
        o.writeInt(h.pointerSize());
        o.writeInt(h.eventsLost());
        o.writeInt(h.cpuSpeedInMHz());
        o.writeLong(h.bootTime());
        o.writeLong(h.perfFreq());
        o.writeLong(h.startTime());
        o.writeInt(h.reservedFlags());
        o.writeInt(h.buffersLost());
        o.string(h.loggerName());
        o.string(h.logFileName());
        o.writeLong(h.timestamp());
    }

    private static LogfileHeader readHeader(StateReader in) {
        return new LogfileHeader(in.readInt(), in.readUnsignedByte(), in.readUnsignedByte(), in.readUnsignedByte(),
                in.readUnsignedByte(), in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readInt(), in.readInt(),
                in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readLong(), in.readLong(),
                in.readLong(), in.readInt(), in.readInt(), in.string(), in.string(), in.readLong());
    }
}
