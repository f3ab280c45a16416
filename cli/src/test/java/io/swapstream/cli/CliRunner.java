package io.swapstream.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the command line in-process and keeps what it printed. */
record CliRunner(int exit, String out, String err) {
    /** The repository's root: a module's tests run in the module's folder. */
    static final java.nio.file.Path REPOSITORY = java.nio.file.Path.of("..").toAbsolutePath().normalize();

    static CliRunner run(String... args) {
        CommandLine cl = Swapstream.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new CliRunner(exit, out.toString(), err.toString());
    }
}
