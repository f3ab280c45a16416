package io.swapstream.decode.inspect;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.event.CSwitchEvent;
import io.swapstream.decode.event.CompactBatchDecoder;
import io.swapstream.decode.event.MalformedEventException;
import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.decode.event.ProcessEvent;
import io.swapstream.decode.event.ThreadEvent;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.decode.merge.SwitchExpander;
import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.BufferLateness;
import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.etw.LogFileMode;
import io.swapstream.etw.LogfileHeader;
import io.swapstream.etw.SessionClock;
import io.swapstream.etw.TraceEvent;
import io.swapstream.etw.TraceEventHandler;
import io.swapstream.etw.TraceHeaderType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What one walk over a file finds: buffers, header types, kernel HookIds, the logfile header and
 * loss indicators. The engine of {@code swapstream inspect}.
 */
public final class FileInventory implements TraceEventHandler {
    private final String source;
    private long size;
    private int buffers;
    private int compressedBuffers;
    private long events;
    private final long[] headerTypeCounts = new long[256];
    private final long[] hookIdCounts = new long[65536];
    private final long[] bufferTypeCounts = new long[8];
    private final TreeSet<Integer> processors = new TreeSet<>();
    private final TreeMap<Integer, List<Long>> sequences = new TreeMap<>();
    private int eventsLostBuffers;
    private int bufferLostBuffers;
    private LogfileHeader header;
    private long firstTimestamp = Long.MAX_VALUE;
    private long lastTimestamp = Long.MIN_VALUE;
    private long compactPackets;
    private long processEvents;
    private long threadEvents;
    private long pmcEvents;
    /** Per processor, the latest time of an event written as it happened (not a batch's packets). */
    private final long[] lastEventTs = new long[0x800];
    private long batchesAfterNewerEvents;
    private final Integer maximumWaitReasonOverride;
    private EtlReader reader;
    /** How late the file's buffers come, walked first: the expansion's merge waits for that. */
    private final BufferLateness lateness;
    /** The expansion of the same buffers, for what the time-ordered merge saw (its counters). */
    private final SessionDecoder expansion;

    private FileInventory(String source, Integer maximumWaitReasonOverride, BufferLateness lateness) {
        this.source = source;
        this.maximumWaitReasonOverride = maximumWaitReasonOverride;
        this.lateness = lateness;
        java.util.Arrays.fill(lastEventTs, Long.MIN_VALUE);
        this.expansion = new SessionDecoder("inspect", maximumWaitReasonOverride, b -> { }, null, SwitchExpander.DEFAULT_BATCH_ROWS,
                MergeLimits.finished(lateness.max()));
    }

    /** Walks every buffer and event of {@code file}. */
    public static FileInventory of(Path file, Integer maximumWaitReasonOverride) throws IOException {
        try (EtlReader r = EtlReader.open(file)) {
            BufferLateness lateness = BufferLateness.byProcessor(r);
            r.rewind();
            FileInventory inv = new FileInventory(file.toString(), maximumWaitReasonOverride, lateness);
            inv.walk(r);
            return inv;
        }
    }

    /** How late the file's buffers came. */
    public BufferLateness lateness() { return lateness; }

    private void walk(EtlReader r) throws IOException {
        reader = r;
        size = r.length();
        while (r.next()) {
            BufferHeader h = r.header();
            buffers++;
            if (h.compressed()) compressedBuffers++;
            if (h.eventsLost()) eventsLostBuffers++;
            if (h.bufferLost()) bufferLostBuffers++;
            if (h.type() < bufferTypeCounts.length) bufferTypeCounts[h.type()]++;
            processors.add(h.processor());
            sequences.computeIfAbsent(h.processor(), k -> new ArrayList<>()).add(h.sequenceNumber());
            r.walk(this);
            expansion.onBuffer(r.decoder(), r.bufferOffset(), r.source());
        }
        expansion.finish();
        if (header == null) {
            throw new EtlFormatException(source, 0, "no logfile header event (SYSTEM header, HookId 0x0000) in the first buffer");
        }
    }

    @Override
    public void onEvent(TraceEvent ev) {
        events++;
        TraceHeaderType type = ev.headerType();
        headerTypeCounts[type.code]++;
        long ts = ev.timestamp();
        if (ts != Long.MIN_VALUE) {
            if (ts < firstTimestamp) firstTimestamp = ts;
            if (ts > lastTimestamp) lastTimestamp = ts;
        }
        int cpu = ev.processor() & 0x7FF;
        long before = lastEventTs[cpu];
        if (ts > before && reader.bufferIndex() > 0) lastEventTs[cpu] = ts;
        if (!type.kernel) return;
        int hook = ev.hookId();
        hookIdCounts[hook]++;
        if (ev.pmcCount() > 0) pmcEvents++;
        if (header == null && LogfileHeader.isHeaderEvent(ev)) {
            header = LogfileHeader.parse(ev, reader.decoder());
            try {
                SessionClock.of(header);
            } catch (IllegalArgumentException e) {
                throw new EtlFormatException(source, reader.bufferOffset() + ev.payloadOffset()
                        + LogfileHeader.clockTypeOffset(ev.pointerSize()), e.getMessage());
            }
        } else if (hook == CompactBatchDecoder.HOOK_ID && header != null) {
            try {
                if (ev.payloadLength() >= 8 && CompactBatchDecoder.firstTimeStamp(ev.data(), ev.payloadOffset()) < before) {
                    batchesAfterNewerEvents++;
                }
                compactPackets += CompactBatchDecoder.decode(ev.data(), ev.payloadOffset(), ev.payloadLength(),
                        maximumWaitReason(), (k, t, o, pr, s, w, nw, i) -> { });
            } catch (MalformedEventException e) {
                throw reader.decoder().error(ev.offset(), e.getMessage());
            }
        } else if (ProcessEvent.handles(hook)) {
            processEvents++;
        } else if (ThreadEvent.handles(hook)) {
            threadEvents++;
        }
    }

    public LogfileHeader header() { return header; }
    public int buffers() { return buffers; }
    public int compressedBuffers() { return compressedBuffers; }
    public long events() { return events; }
    /** Compact batches whose first switch is older than an event written before them on their processor. */
    public long batchesAfterNewerEvents() { return batchesAfterNewerEvents; }

    public int maximumWaitReason() {
        return maximumWaitReasonOverride != null ? maximumWaitReasonOverride : MaximumWaitReason.forBuild(header.build());
    }

    /** Buffer sequence numbers (session-wide; header buffers excluded) missing between the smallest and largest seen. */
    public long missingSequenceNumbers() {
        TreeSet<Long> all = allSequences();
        if (all.isEmpty()) return 0;
        return all.last() - all.first() + 1 - all.size();
    }

    /**
     * Per processor, the missing sequence numbers that fall between two consecutive buffers of
     * that processor. The sequence is the logger's, shared by all processors, so a missing buffer
     * can lie inside the intervals of several processors: these are the processors it may have
     * come from, not an exact split.
     */
    public Map<Integer, Long> sequenceGapsByProcessor() {
        TreeSet<Long> all = allSequences();
        Map<Integer, Long> gaps = new TreeMap<>();
        for (Map.Entry<Integer, List<Long>> e : sequences.entrySet()) {
            List<Long> seqs = new ArrayList<>(e.getValue());
            seqs.removeIf(x -> x <= 0);
            seqs.sort(null);
            long missing = 0;
            for (int i = 1; i < seqs.size(); i++) {
                long a = seqs.get(i - 1);
                long b = seqs.get(i);
                if (b - a > 1) missing += b - a - 1 - all.subSet(a, false, b, false).size();
            }
            gaps.put(e.getKey(), missing);
        }
        return gaps;
    }

    private TreeSet<Long> allSequences() {
        TreeSet<Long> all = new TreeSet<>();
        sequences.values().forEach(all::addAll);
        all.removeIf(x -> x <= 0);
        return all;
    }

    /** The inspect report; keys include those of EXPECTED.json. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file", source);
        m.put("size", size);
        m.put("buffers", buffers);
        m.put("compressedBuffers", compressedBuffers);
        m.put("events", events);
        Map<String, Long> types = new TreeMap<>();
        for (TraceHeaderType t : TraceHeaderType.values()) {
            if (headerTypeCounts[t.code] > 0) types.put(t.name(), headerTypeCounts[t.code]);
        }
        m.put("headerTypes", types);
        Map<String, Long> hooks = new TreeMap<>();
        for (int i = 0; i < hookIdCounts.length; i++) {
            if (hookIdCounts[i] > 0) hooks.put(String.format("0x%04x", i), hookIdCounts[i]);
        }
        m.put("kernelHookIds", hooks);
        Map<String, Long> bufferTypes = new TreeMap<>();
        for (int i = 0; i < bufferTypeCounts.length; i++) {
            if (bufferTypeCounts[i] > 0) bufferTypes.put(BufferHeader.typeName(i), bufferTypeCounts[i]);
        }
        m.put("bufferTypes", bufferTypes);
        m.put("processorIndexes", new ArrayList<>(processors));
        m.put("logfileHeader", headerMap(header));
        m.put("build", header.build());
        m.put("clockType", ClockType.name(header.clockType()));
        m.put("maximumWaitReason", String.format("0x%02X", maximumWaitReason()));
        m.put("maximumWaitReasonSource", maximumWaitReasonOverride != null ? "override" : "build");
        Map<String, Object> loss = new LinkedHashMap<>();
        loss.put("eventsLostBuffers", eventsLostBuffers);
        loss.put("bufferLostBuffers", bufferLostBuffers);
        loss.put("eventsLost", Integer.toUnsignedLong(header.eventsLost()));
        loss.put("buffersLost", Integer.toUnsignedLong(header.buffersLost()));
        Map<String, Long> gaps = new LinkedHashMap<>();
        sequenceGapsByProcessor().forEach((cpu, n) -> gaps.put(String.valueOf(cpu), n));
        loss.put("missingSequenceNumbers", missingSequenceNumbers());
        loss.put("sequenceGapsByProcessor", gaps);
        m.put("loss", loss);
        Map<String, Object> cs = new LinkedHashMap<>();
        cs.put("cswitchEvents", hookIdCounts[CSwitchEvent.HOOK_ID]);
        cs.put("compactBatches", hookIdCounts[CompactBatchDecoder.HOOK_ID]);
        cs.put("compactPackets", compactPackets);
        cs.put("processEvents", processEvents);
        cs.put("threadEvents", threadEvents);
        cs.put("pmcEvents", pmcEvents);
        // batches written after events their processor logged while they were open (docs/etw-formats.md §5)
        cs.put("batchesAfterNewerEvents", batchesAfterNewerEvents);
        m.put("scheduling", cs);
        m.put("expansion", expansion.counters().toMap());
        m.put("lateness", latenessMap());
        if (firstTimestamp != Long.MAX_VALUE) {
            m.put("firstTimestamp", firstTimestamp);
            m.put("lastTimestamp", lastTimestamp);
        }
        return m;
    }

    /**
     * How late buffers reached the file, in seconds: per processor that wrote a late one, its largest
     * lateness and that buffer (counting events with kernel trace headers), and the file's largest
     * (counting every event, and a compact batch from its first switch: what the merge waits for).
     */
    private Map<String, Object> latenessMap() {
        SessionClock clock = SessionClock.of(header);
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, Object> byCpu = new LinkedHashMap<>();
        lateness.kernelLatenessByProcessor().forEach((cpu, v) -> {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("seconds", seconds(clock, v[0]));
            one.put("buffer", v[1]);
            byCpu.put(String.valueOf(cpu), one);
        });
        m.put("byProcessor", byCpu);
        m.put("maxSeconds", seconds(clock, lateness.max()));
        m.put("maxBuffer", lateness.maxBuffer());
        return m;
    }

    private static double seconds(SessionClock clock, long ticks) {
        return Math.round(clock.ticksToNanos(ticks) / 1e6) / 1e3;
    }

    public static Map<String, Object> headerMap(LogfileHeader h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("BufferSize", Integer.toUnsignedLong(h.bufferSize()));
        m.put("Version", h.majorVersion() + "." + h.minorVersion() + "." + h.subVersion() + "." + h.subMinorVersion());
        m.put("ProviderVersion", Integer.toUnsignedLong(h.providerVersion()));
        m.put("Build", h.build());
        m.put("NumberOfProcessors", Integer.toUnsignedLong(h.numberOfProcessors()));
        m.put("EndTime", h.endTime());
        m.put("TimerResolution", Integer.toUnsignedLong(h.timerResolution()));
        m.put("MaximumFileSize", Integer.toUnsignedLong(h.maximumFileSize()));
        m.put("LogFileMode", LogFileMode.hex(h.logFileMode()));
        m.put("LogFileModeNames", LogFileMode.names(h.logFileMode()));
        m.put("BuffersWritten", Integer.toUnsignedLong(h.buffersWritten()));
        m.put("StartBuffers", Integer.toUnsignedLong(h.startBuffers()));
        m.put("PointerSize", Integer.toUnsignedLong(h.pointerSize()));
        m.put("EventsLost", Integer.toUnsignedLong(h.eventsLost()));
        m.put("CpuSpeedInMHz", Integer.toUnsignedLong(h.cpuSpeedInMHz()));
        m.put("BootTime", h.bootTime());
        m.put("PerfFreq", h.perfFreq());
        m.put("StartTime", h.startTime());
        m.put("ReservedFlags", Integer.toUnsignedLong(h.reservedFlags()));
        m.put("ClockType", ClockType.name(h.clockType()));
        m.put("BuffersLost", Integer.toUnsignedLong(h.buffersLost()));
        m.put("LoggerName", h.loggerName());
        m.put("LogFileName", h.logFileName());
        return m;
    }
}
