package io.swapstream.cli;

import io.swapstream.decode.MaximumWaitReason;
import io.swapstream.ingest.generate.GeneratorOptions;
import io.swapstream.ingest.generate.TraceGenerator;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "generate", description = "Write a synthetic .etl from a simulated scheduler (CSwitch events or compact batches).")
final class GenerateCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = {"-o", "--out"}, required = true, description = "the .etl file to write")
    Path out;

    @Option(names = "--mode", defaultValue = "compact", description = "cswitch (0x0524 events) or compact (0x0525 batches); default ${DEFAULT-VALUE}")
    String mode;

    @Option(names = "--switches", defaultValue = "20000", description = "about this many context switches; default ${DEFAULT-VALUE}")
    long switches;

    @Option(names = "--cpus", defaultValue = "4") int cpus;
    @Option(names = "--processes", defaultValue = "6") int processes;
    @Option(names = "--threads-per-process", defaultValue = "5") int threadsPerProcess;
    @Option(names = "--seed", defaultValue = "42") long seed;
    @Option(names = "--build", defaultValue = "19041", description = "OS build in the logfile header") int build;
    @Option(names = "--pmc", defaultValue = "0", description = "PMC counters on each CSwitch event (cswitch mode)") int pmc;
    @Option(names = "--no-rundown", description = "leave out process/thread events") boolean noRundown;
    @Option(names = "--no-noise", description = "leave out unrelated events") boolean noNoise;
    @Option(names = "--exit-rate", defaultValue = "0.01", description = "chance a thread exits after a run slice") double exitRate;
    @Option(names = "--logger-name", defaultValue = "NT Kernel Logger") String loggerName;
    @Option(names = "--silent-cpus", defaultValue = "0", description = "this many of the processors (the highest) never run anything and log nothing; default ${DEFAULT-VALUE}") int silentCpus;

    @Override
    public Integer call() throws Exception {
        GeneratorOptions o = new GeneratorOptions(mode, cpus, processes, threadsPerProcess, switches, seed, build, pmc,
                !noRundown, !noNoise, exitRate, loggerName, GeneratorOptions.defaults().startTimeFileTime(), silentCpus, null);
        long n = TraceGenerator.generate(out, o, MaximumWaitReason.forBuild(build));
        spec.commandLine().getErr().printf("wrote %s: %d context switches (%s)%n", out, n, mode);
        return 0;
    }
}
