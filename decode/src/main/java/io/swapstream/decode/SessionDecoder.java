package io.swapstream.decode;

import io.swapstream.schemas.etw.BufferDecoder;
import io.swapstream.schemas.etw.EtlFormatException;
import io.swapstream.schemas.etw.EtlReader;
import io.swapstream.schemas.etw.LogfileHeader;
import io.swapstream.schemas.etw.LoggerTiming;
import io.swapstream.schemas.etw.SessionClock;
import io.swapstream.schemas.etw.TraceEvent;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Decodes one session buffer by buffer: the first buffer's logfile header sets the clock and
 * MaximumWaitReason, every event goes to a {@link SwitchExpander}. Serves the offline commands (a
 * file) and the decode stream (one raw buffer per record) alike.
 */
public final class SessionDecoder {
    private final String host;
    private final Integer maximumWaitReasonOverride;
    private final Consumer<ContextSwitch> switches;
    private final Consumer<ThreadInfo> threads;
    private TraceSession session;
    private SwitchExpander expander;
    private BufferDecoder current;
    private long currentOffset;
    private String source;

    public SessionDecoder(String host, Integer maximumWaitReasonOverride, Consumer<ContextSwitch> switches,
                          Consumer<ThreadInfo> threads) {
        this.host = host;
        this.maximumWaitReasonOverride = maximumWaitReasonOverride;
        this.switches = switches;
        this.threads = threads;
    }

    /** Decodes a whole file; returns the session. */
    public static SessionDecoder decodeFile(Path file, String host, Integer maximumWaitReasonOverride,
                                            Consumer<ContextSwitch> switches, Consumer<ThreadInfo> threads) throws IOException {
        try (EtlReader r = EtlReader.open(file)) {
            return decode(r, host, maximumWaitReasonOverride, switches, threads);
        }
    }

    /** Decodes every buffer {@code reader} has left, then ends the session. */
    public static SessionDecoder decode(EtlReader reader, String host, Integer maximumWaitReasonOverride,
                                        Consumer<ContextSwitch> switches, Consumer<ThreadInfo> threads) throws IOException {
        SessionDecoder d = new SessionDecoder(host, maximumWaitReasonOverride, switches, threads);
        while (reader.next()) d.onBuffer(reader.decoder(), reader.bufferOffset(), reader.source());
        d.finish();
        return d;
    }

    /** The session, known once the header buffer has been read. */
    public TraceSession session() { return session; }
    public ExpansionCounters counters() { return expander == null ? new ExpansionCounters() : expander.counters(); }
    public ThreadDirectory directory() { return expander == null ? new ThreadDirectory(null) : expander.directory(); }

    /**
     * Takes the buffer loaded in {@code decoder}.
     *
     * @throws EtlFormatException for a malformed event, located in the source
     */
    public void onBuffer(BufferDecoder decoder, long bufferOffset, String source) {
        this.current = decoder;
        this.currentOffset = bufferOffset;
        this.source = source;
        decoder.walk(this::onEvent);
    }

    private void onEvent(TraceEvent ev) {
        if (expander == null) {
            if (!LogfileHeader.isHeaderEvent(ev)) {
                throw current.error(ev.offset(), "the session does not start with a logfile header event");
            }
            start(ev);
            return;
        }
        try {
            expander.onEvent(ev);
        } catch (MalformedEventException e) {
            throw current.error(ev.offset(), String.format("event 0x%04x: %s", ev.hookId(), e.getMessage()));
        }
    }

    private void start(TraceEvent ev) {
        LogfileHeader h = LogfileHeader.parse(ev, current);
        SessionClock clock;
        try {
            clock = SessionClock.of(h);
        } catch (IllegalArgumentException e) {
            throw new EtlFormatException(source, currentOffset + ev.payloadOffset()
                    + LogfileHeader.clockTypeOffset(ev.pointerSize()), e.getMessage());
        }
        int max = maximumWaitReasonOverride != null ? maximumWaitReasonOverride : MaximumWaitReason.forBuild(h.build());
        session = TraceSession.of(host, h, max);
        expander = new SwitchExpander(session.session(), host, clock, max, h.numberOfProcessors(),
                LoggerTiming.maxWriteDelayTicks(h.timerResolution(), clock.ticksPerSecond()), switches, threads);
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
                if (hook == ContextSwap.HOOK_ID) {
                    ContextSwap.check(ev.payloadLength());
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

    /** Ends the session, flushing every processor's last switch. */
    public void finish() {
        if (expander != null) expander.finish();
    }
}
