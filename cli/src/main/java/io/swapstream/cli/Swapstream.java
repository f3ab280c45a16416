package io.swapstream.cli;

import io.swapstream.schemas.etw.EtlFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The one {@code swapstream} executable. */
@Command(name = "swapstream", mixinStandardHelpOptions = true, version = "swapstream 0.1.0",
        description = "Windows context-switch traces to per-thread scheduling statistics.",
        subcommands = {RunCommand.class, InspectCommand.class, SwitchesCommand.class, StatsCommand.class, GenerateCommand.class, IngestCommand.class, StageCommand.Decode.class, StageCommand.Aggregate.class})
public final class Swapstream {

    /** Exit code for input the user must fix (bad file, bad option). */
    public static final int EXIT_BAD_INPUT = 2;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        CommandLine cl = commandLine();
        return cl.execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Swapstream());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            Throwable e = ex instanceof UncheckedIOException u ? u.getCause() : ex;
            cmd.getErr().println("swapstream: " + userMessage(e));
            return EXIT_BAD_INPUT;
        });
        return cl;
    }

    /** One line for a user's mistake; only real bugs keep their class name. */
    static String userMessage(Throwable e) {
        if (e instanceof EtlFormatException) return e.getMessage();
        if (e instanceof NoSuchFileException) return e.getMessage() + ": no such file";
        if (e instanceof AccessDeniedException) return e.getMessage() + ": permission denied";
        if (e instanceof IOException) return e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof IllegalArgumentException) return e.getMessage();
        return e.toString();
    }
}
