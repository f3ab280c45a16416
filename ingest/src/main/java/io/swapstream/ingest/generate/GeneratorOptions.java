package io.swapstream.ingest.generate;

/**
 * What the simulated scheduler runs and how the trace is written.
 *
 * @param mode           {@code cswitch} (one 0x0524 event per switch) or {@code compact} (0x0525 batches)
 * @param switches       stop after about this many context switches
 * @param pmcCounters    PMC counters on each CSwitch event (0 for none; cswitch mode only)
 * @param rundown        write Process/Thread rundown, start, end and name events
 * @param noise          write unrelated events (sampled profile, manifest events) that decoding skips
 * @param exitRate       probability that a thread exits at the end of a run slice (its TID is reused later)
 */
public record GeneratorOptions(String mode, int processors, int processes, int threadsPerProcess, long switches,
                               long seed, int build, int pmcCounters, boolean rundown, boolean noise, double exitRate,
                               String loggerName, long startTimeFileTime) {

    public static GeneratorOptions defaults() {
        return new GeneratorOptions("compact", 4, 6, 5, 20_000, 42, 19041, 0, true, true, 0.01,
                "NT Kernel Logger", 134000000000000000L);
    }

    public GeneratorOptions withMode(String m) {
        return new GeneratorOptions(m, processors, processes, threadsPerProcess, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime);
    }

    public GeneratorOptions withSwitches(long n) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, n, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime);
    }

    public GeneratorOptions withSeed(long s) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, s, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime);
    }

    public GeneratorOptions withPmc(int n) {
        return new GeneratorOptions(mode, processors, processes, threadsPerProcess, switches, seed, build, n,
                rundown, noise, exitRate, loggerName, startTimeFileTime);
    }

    public GeneratorOptions withShape(int cpus, int procs, int threads) {
        return new GeneratorOptions(mode, cpus, procs, threads, switches, seed, build, pmcCounters,
                rundown, noise, exitRate, loggerName, startTimeFileTime);
    }
}
