package io.swapstream.generate;

import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlWriter;
import java.io.IOException;
import java.nio.file.Path;

/** {@code swapstream generate}: a simulated schedule written as a real .etl file. */
public final class TraceGenerator {
    private TraceGenerator() {}

    /** The raw timestamp of the logfile header event; the simulation starts just after it. */
    public static final long TS0 = 5_000_000_000L;

    /**
     * Writes the trace; returns the number of context switches in it.
     *
     * @param maximumWaitReason how compact batches encode OldThreadStateWr (the build's value)
     */
    public static long generate(Path out, GeneratorOptions o, int maximumWaitReason) throws IOException {
        return generate(out, o, maximumWaitReason, null);
    }

    /**
     * Writes the trace and tells {@code observer} (may be null) every decision of the simulated
     * scheduler as it makes it, in simulation order: what the trace should decode to.
     */
    public static long generate(Path out, GeneratorOptions o, int maximumWaitReason, ScheduleSink observer)
            throws IOException {
        boolean compact = switch (o.mode()) {
            case "compact" -> true;
            case "cswitch" -> false;
            default -> throw new IllegalArgumentException("mode must be cswitch or compact, not '" + o.mode() + "'");
        };
        if (compact && o.pmcCounters() > 0) {
            throw new IllegalArgumentException("PMC counters ride on CSwitch events: use --mode cswitch with --pmc");
        }
        EtlWriter.Session s = new EtlWriter.Session(o.bufferSize(), o.build(), o.processors(), ClockType.PERFCOUNTER,
                SchedulerSimulator.TICKS_PER_SECOND, 2995, o.startTimeFileTime(), o.startTimeFileTime() - 36_000_000_000L,
                o.logFileMode(), o.loggerName(), "generated-" + o.mode() + ".etl");
        long n;
        try (EtlWriter w = new EtlWriter(out, s, TS0)) {
            EtlScheduleWriter sink = new EtlScheduleWriter(w, compact, o.processors(), maximumWaitReason);
            SchedulerSimulator sim = new SchedulerSimulator(o, observer == null ? sink : new ScheduleTee(sink, observer));
            n = sim.run(TS0 + 1);
            sink.finish(sim.endTime());
        }
        return n;
    }
}
