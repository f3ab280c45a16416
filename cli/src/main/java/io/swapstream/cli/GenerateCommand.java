package io.swapstream.cli;

import io.swapstream.decode.event.MaximumWaitReason;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.generate.TraceReplay;
import io.swapstream.local.UserInputException;
import java.time.Duration;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "generate", description = "Write a synthetic .etl from a simulated scheduler (CSwitch events or compact batches).")
final class GenerateCommand implements Callable<Integer> {
    enum Mode { cswitch, compact }

    /** Processor indexes are 11 bits in a buffer header (docs/etw-formats.md §1). */
    static final int MAX_CPUS = 0x800;

    @Spec CommandSpec spec;

    // a label without a dot: the usage line wraps at one ("-o=FILE." then "etl")
    @Option(names = {"-o", "--out"}, required = true, paramLabel = "FILE", description = "the .etl file to write; a missing folder is created")
    Path out;

    @Option(names = "--mode", defaultValue = "compact", paramLabel = "MODE", description = "cswitch (0x0524 events) or compact (0x0525 batches)")
    Mode mode;

    @Option(names = "--switches", defaultValue = "20000", paramLabel = "N", description = "stop after about this many context switches")
    long switches;

    @Option(names = "--cpus", defaultValue = "4", paramLabel = "N", description = "processors in the simulated machine")
    int cpus;

    @Option(names = "--processes", defaultValue = "6", paramLabel = "N", description = "processes, each with its own threads")
    int processes;

    @Option(names = "--threads-per-process", defaultValue = "5", paramLabel = "N", description = "threads each process starts with")
    int threadsPerProcess;

    @Option(names = "--seed", defaultValue = "42", description = "random seed: the same seed gives the same trace")
    long seed;

    @Option(names = "--build", defaultValue = "19041", description = "OS build in the logfile header (sets MaximumWaitReason)")
    int build;

    @Option(names = "--pmc", defaultValue = "0", paramLabel = "N", description = "PMC counters on each CSwitch event, 0 to 7 (cswitch mode)")
    int pmc;

    @Option(names = "--no-rundown", description = "leave out process and thread events") boolean noRundown;

    @Option(names = "--no-noise", description = "leave out unrelated events (sampled profile, manifest events)") boolean noNoise;

    @Option(names = "--exit-rate", defaultValue = "0.01", paramLabel = "P", description = "chance, 0 to 1, that a thread exits after a run slice")
    double exitRate;

    @Option(names = "--logger-name", defaultValue = "NT Kernel Logger", description = "logger name in the logfile header (part of the session id)")
    String loggerName;

    @Option(names = "--silent-cpus", defaultValue = "0", paramLabel = "N", description = "this many of the processors (the highest) never run anything and log nothing")
    int silentCpus;

    @Option(names = "--buffer-size", defaultValue = "64", paramLabel = "KIB", description = "KiB in each trace buffer, 4 to 1024")
    int bufferKiB;

    @Option(names = "--flush-timer", paramLabel = "DURATION", description = "write every processor's partly filled buffer this often"
            + " (1s: a real-time or flushed session); default none, as a session logging to a file: a buffer is written when"
            + " full, a quiet processor's seconds or minutes late, and everything when the session stops")
    Duration flushTimer;

    @Option(names = "--idle-cpu", paramLabel = "CPU:START:SECONDS", description = "keep processor CPU idle, without a switch, for SECONDS"
            + " from START seconds into the trace: its buffer then spans the gap")
    String idleCpu;

    @Option(names = "--start", paramLabel = "TIME", description = "when the trace starts: now, or an ISO-8601 time such as"
            + " 2025-08-18T14:13:00Z. Default: now, so traces made minutes apart are minutes apart, as real ones are")
    String start;

    @Option(names = "--speed", paramLabel = "X", description = "write the file as the trace runs, X times faster than real time: a growing trace for ingest --watch")
    Double speed;

    @Override
    public Integer call() throws Exception {
        if (speed != null) Options.between("--speed", speed, 0.001, 1e9);
        Options.atLeast("--switches", switches, 1);
        Options.atLeast("--cpus", cpus, 1);
        if (cpus > MAX_CPUS) throw new UserInputException("--cpus must be at most " + MAX_CPUS + ", not " + cpus);
        Options.atLeast("--processes", processes, 1);
        Options.atLeast("--threads-per-process", threadsPerProcess, 1);
        Options.atLeast("--build", build, 1);
        if (pmc < 0 || pmc > 7) throw new UserInputException("--pmc must be between 0 and 7, not " + pmc);
        if (pmc > 0 && mode == Mode.compact) throw new UserInputException("--pmc: PMC counters ride on CSwitch events; use --mode cswitch");
        Options.between("--exit-rate", exitRate, 0, 1);
        if (bufferKiB < 4 || bufferKiB > 1024) throw new UserInputException("--buffer-size must be between 4 and 1024 KiB, not " + bufferKiB);
        if (silentCpus < 0 || silentCpus >= cpus) {
            throw new UserInputException("--silent-cpus must leave at least one of the " + cpus + " processors running, not " + silentCpus);
        }
        long flushTicks = flushTimer == null ? 0 : flushTimer.toNanos() / 100;
        GeneratorOptions o = new GeneratorOptions(mode.name(), cpus, processes, threadsPerProcess, switches, seed, build, pmc,
                !noRundown, !noNoise, exitRate, loggerName, startFileTime(), silentCpus, idleSpell(),
                bufferKiB * 1024, flushTicks);
        createFolder(out.toAbsolutePath().getParent());
        Options.outputFile("--out", out);
        if (speed == null) {
            long n = TraceGenerator.generate(out, o, MaximumWaitReason.forBuild(build));
            spec.commandLine().getErr().printf("wrote %s: %d context switches (%s)%n", out, n, mode);
            return 0;
        }
        // generated beside the target first, so nothing but the growing file appears where it is watched
        java.nio.file.Path whole = java.nio.file.Files.createTempFile("swapstream-generate-", ".tmp");
        try {
            long n = TraceGenerator.generate(whole, o, MaximumWaitReason.forBuild(build));
            // trace time 0 (the logfile header's StartTime) on the wall clock: what a latency measurement needs
            long now = System.currentTimeMillis();
            spec.commandLine().getErr().printf("writing %s: %d context switches (%s) at %sx real time, trace time 0 at %s (%d ms since 1970)%n",
                    out, n, mode, speed, java.time.Instant.ofEpochMilli(now), now);
            spec.commandLine().getErr().flush();
            TraceReplay.replay(whole, out, speed, null);
            spec.commandLine().getErr().printf("wrote %s%n", out);
        } finally {
            java.nio.file.Files.deleteIfExists(whole);
        }
        return 0;
    }

    /** generate -o traces/a.etl for ingest --watch traces: the folder need not be made first. */
    private static void createFolder(Path folder) {
        if (folder == null || java.nio.file.Files.exists(folder)) return;
        try {
            java.nio.file.Files.createDirectories(folder);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            throw new UserInputException("--out: cannot create the folder " + folder + ": a file is in its way");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new UserInputException("--out: cannot create the folder " + folder + ": permission denied");
        } catch (java.io.IOException e) {
            throw new UserInputException("--out: cannot create the folder " + folder);
        }
    }

    /** --start as a FILETIME (100 ns units since 1601). */
    private long startFileTime() {
        java.time.Instant t;
        if (start == null || start.equals("now")) {
            t = java.time.Instant.now();
        } else {
            try {
                t = java.time.Instant.parse(start);
            } catch (java.time.format.DateTimeParseException e) {
                throw new UserInputException("--start: '" + start + "' is not now or an ISO-8601 time such as 2025-08-18T14:13:00Z");
            }
        }
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 10_000_000L), t.getNano() / 100) + 116_444_736_000_000_000L;
    }

    /** --idle-cpu CPU:START:SECONDS, or null. */
    private GeneratorOptions.QuietSpell idleSpell() {
        if (idleCpu == null) return null;
        String[] parts = idleCpu.split(":");
        String why = "--idle-cpu: '" + idleCpu + "' is not CPU:START:SECONDS (for example 1:5:40)";
        if (parts.length != 3) throw new UserInputException(why);
        int cpu;
        double start;
        double length;
        try {
            cpu = Integer.parseInt(parts[0].trim());
            start = Double.parseDouble(parts[1].trim());
            length = Double.parseDouble(parts[2].trim());
        } catch (NumberFormatException e) {
            throw new UserInputException(why);
        }
        if (cpu < 0 || cpu >= cpus - silentCpus) {
            throw new UserInputException("--idle-cpu: processor " + cpu + " is not one of the " + (cpus - silentCpus) + " that run threads");
        }
        if (!(start >= 0 && start < 1e6) || !(length > 0 && length < 1e6)) {
            throw new UserInputException("--idle-cpu: START must be 0 or more and SECONDS more than 0, both under 1e6 s");
        }
        long tps = io.swapstream.generate.SchedulerSimulator.TICKS_PER_SECOND;
        return new GeneratorOptions.QuietSpell(cpu, Math.round(start * tps), Math.round(length * tps));
    }
}
