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
        return new GeneratorOptions(m, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    /** The session's start, as a FILETIME (100 ns since 1601): it names the session and dates its events. */
    public GeneratorOptions withStartTime(long fileTime) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, fileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withSwitches(long n) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, n, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withSeed(long s) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, s, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withPmc(int n) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, n,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withShape(int cpus, int procs, int threads) {
        return new GeneratorOptions(mode, cpus, procs, threads, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withSilentCpus(int n) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, n, quiet, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withQuietSpell(QuietSpell q) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, q, bufferSize, flushTimerTicks);
    }

    public GeneratorOptions withBufferSize(int bytes) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bytes, flushTimerTicks);
    }

    public GeneratorOptions withExitRate(double rate) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, rate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    /**
     * The logger's name in the logfile header (part of the session id): "NT Kernel Logger" by default, or a system
     * logger session's own name (windows/swapstream-collect.ps1 starts "Swapstream"), whose header then says
     * EVENT_TRACE_SYSTEM_LOGGER_MODE as well.
     */
    public GeneratorOptions withLoggerName(String name) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, name, startTimeFileTime, silentCpus, quiet, bufferSize, flushTimerTicks);
    }

    /** The logfile header's LogFileMode: sequential, and a system logger's mode unless the logger is the NT Kernel Logger. */
    public int logFileMode() {
        return "NT Kernel Logger".equalsIgnoreCase(loggerName) ? 0x00000001 : 0x00000001 | io.swapstream.etw.LogFileMode.SYSTEM_LOGGER_MODE;
    }

    /** The logger's flush timer in 10 MHz ticks; 0 for a file session's default (none). */
    public GeneratorOptions withFlushTimer(long ticks) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime, silentCpus, quiet, bufferSize, ticks);
    }
}
