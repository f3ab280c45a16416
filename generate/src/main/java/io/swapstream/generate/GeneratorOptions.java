package io.swapstream.generate;

/**
 * What the simulated scheduler runs and how the trace is written.
 *
 * @param mode           {@code cswitch} (one 0x0524 event per switch) or {@code compact} (0x0525 batches)
 * @param switches       stop after about this many context switches
 * @param pmcCounters    PMC counters on each CSwitch event (0 for none; cswitch mode only)
 * @param rundown        write Process/Thread rundown, start, end and name events
 * @param noise          write unrelated events (sampled profile, manifest events) that decoding skips
 * @param exitRate       probability that a thread exits at the end of a run slice (its TID is reused later)
 * @param silentCpus     this many processors (the highest-numbered) are in the header but never run
 *                       anything, so they log nothing
 * @param quiet          a spell in which one processor takes no work and logs nothing; null for none
 * @param bufferSize     bytes of each trace buffer (the logger's BufferSize)
 * @param flushTimerTicks the logger's flush timer in 10 MHz ticks: every period it writes every
 *                       processor's partly filled buffer and the batches older than the age limit.
 *                       0, the default of a session logging to a file, writes a buffer only when it
 *                       is full and everything when the session stops
 */
public record GeneratorOptions(String mode, int processors, int processes, int threadsPerProcess, long switches,
                               long seed, int build, int pmcCounters, boolean rundown, boolean noise, double exitRate,
                               String loggerName, long startTimeFileTime, int silentCpus, QuietSpell quiet, int bufferSize,
                               long flushTimerTicks) {

    /**
     * Processor {@code cpu} finishes what it runs at {@code fromTicks} and then stays idle, without
     * a switch, for {@code lengthTicks} (10 MHz ticks from the start of the simulation).
     */
    public record QuietSpell(int cpu, long fromTicks, long lengthTicks) {
        boolean covers(int c, long sinceStart) {
            return c == cpu && sinceStart >= fromTicks && sinceStart < fromTicks + lengthTicks;
        }
    }

    public GeneratorOptions {
        if (processors < 1) throw new IllegalArgumentException("at least one processor, not " + processors);
        if (bufferSize < 4096 || bufferSize > 1 << 20) throw new IllegalArgumentException("buffer size " + bufferSize + " is not 4 KiB to 1 MiB");
        if (flushTimerTicks < 0) throw new IllegalArgumentException("the flush timer cannot be negative: " + flushTimerTicks);
        if (silentCpus < 0 || silentCpus >= processors) {
            throw new IllegalArgumentException("silent processors must leave at least one of " + processors + " running, not " + silentCpus);
        }
    }

    public static GeneratorOptions defaults() {
        return new GeneratorOptions("compact", 4, 6, 5, 20_000, 42, 19041, 0, true, true, 0.01,
                "NT Kernel Logger", 134000000000000000L, 0, null, 64 * 1024, 0L);
    }

    /** Processors that run threads. */
    public int activeCpus() { return processors - silentCpus; }

    public GeneratorOptions withMode(String m) {
        return with(c -> c.mode = m);
    }

    /** The session's start, as a FILETIME (100 ns since 1601): it names the session and dates its events. */
    public GeneratorOptions withStartTime(long fileTime) {
        return with(c -> c.startTimeFileTime = fileTime);
    }

    public GeneratorOptions withSwitches(long n) {
        return with(c -> c.switches = n);
    }

    public GeneratorOptions withSeed(long s) {
        return with(c -> c.seed = s);
    }

    public GeneratorOptions withPmc(int n) {
        return with(c -> c.pmcCounters = n);
    }

    public GeneratorOptions withShape(int cpus, int procs, int threads) {
        return with(c -> { c.processors = cpus; c.processes = procs; c.threadsPerProcess = threads; });
    }

    public GeneratorOptions withSilentCpus(int n) {
        return with(c -> c.silentCpus = n);
    }

    public GeneratorOptions withQuietSpell(QuietSpell q) {
        return with(c -> c.quiet = q);
    }

    public GeneratorOptions withBufferSize(int bytes) {
        return with(c -> c.bufferSize = bytes);
    }

    public GeneratorOptions withExitRate(double rate) {
        return with(c -> c.exitRate = rate);
    }

    /**
     * The logger's name in the logfile header (part of the session id): "NT Kernel Logger" by default, or a system
     * logger session's own name (windows/swapstream-collect.ps1 starts "Swapstream"), whose header then says
     * EVENT_TRACE_SYSTEM_LOGGER_MODE as well.
     */
    public GeneratorOptions withLoggerName(String name) {
        return with(c -> c.loggerName = name);
    }

    /** The logfile header's LogFileMode: sequential, and a system logger's mode unless the logger is the NT Kernel Logger. */
    public int logFileMode() {
        return "NT Kernel Logger".equalsIgnoreCase(loggerName) ? 0x00000001 : 0x00000001 | io.swapstream.etw.LogFileMode.SYSTEM_LOGGER_MODE;
    }

    /** The logger's flush timer in 10 MHz ticks; 0 for a file session's default (none). */
    public GeneratorOptions withFlushTimer(long ticks) {
        return with(c -> c.flushTimerTicks = ticks);
    }

    /** A copy with some components changed: the one place besides the record's header that lists them all. */
    private GeneratorOptions with(java.util.function.Consumer<Components> change) {
        Components c = new Components(this);
        change.accept(c);
        return new GeneratorOptions(c.mode, c.processors, c.processes, c.threadsPerProcess, c.switches, c.seed, c.build, c.pmcCounters, c.rundown, c.noise, c.exitRate, c.loggerName, c.startTimeFileTime, c.silentCpus, c.quiet, c.bufferSize, c.flushTimerTicks);
    }

    /** The components of a copy being made. */
    private static final class Components {
        String mode;
        int processors;
        int processes;
        int threadsPerProcess;
        long switches;
        long seed;
        int build;
        int pmcCounters;
        boolean rundown;
        boolean noise;
        double exitRate;
        String loggerName;
        long startTimeFileTime;
        int silentCpus;
        QuietSpell quiet;
        int bufferSize;
        long flushTimerTicks;

        Components(GeneratorOptions o) {
            mode = o.mode;
            processors = o.processors;
            processes = o.processes;
            threadsPerProcess = o.threadsPerProcess;
            switches = o.switches;
            seed = o.seed;
            build = o.build;
            pmcCounters = o.pmcCounters;
            rundown = o.rundown;
            noise = o.noise;
            exitRate = o.exitRate;
            loggerName = o.loggerName;
            startTimeFileTime = o.startTimeFileTime;
            silentCpus = o.silentCpus;
            quiet = o.quiet;
            bufferSize = o.bufferSize;
            flushTimerTicks = o.flushTimerTicks;
        }
    }
}
