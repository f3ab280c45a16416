package io.swapstream.cli;

import io.swapstream.cli.kafka.AclsCommand;
import io.swapstream.cli.kafka.BrokerCommand;
import io.swapstream.cli.kafka.Denials;
import io.swapstream.cli.kafka.SchemasCommand;
import io.swapstream.cli.kafka.TopicsCommand;
import io.swapstream.cli.stage.AggregateCommand;
import io.swapstream.cli.stage.DecodeCommand;
import io.swapstream.cli.stage.HttpUserCommand;
import io.swapstream.cli.stage.RollupCommand;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.local.ServiceException;
import io.swapstream.local.UserInputException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine;

/** The one {@code swapstream} executable. */
@Command(name = "swapstream", mixinStandardHelpOptions = true, version = "swapstream " + Swapstream.RELEASE,
        description = "Windows context-switch traces to per-thread scheduling statistics.",
        subcommands = {RunCommand.class, InspectCommand.class, SwitchesCommand.class, StatsCommand.class, GenerateCommand.class,
            IngestCommand.class, ExportCommand.class, ArchiveCommand.class, TopicsCommand.class, AclsCommand.class, DecodeCommand.class,
            AggregateCommand.class, RollupCommand.class, BrokerCommand.class, TailCommand.class, BenchCommand.class, HttpUserCommand.class,
            SchemasCommand.class,
            CommandLine.HelpCommand.class})
public final class Swapstream {
    /** The release this build is (docs/upgrading.md lists each, with what it takes over from). */
    public static final String RELEASE = "0.2.0-dev (takes over from 0.1.0)";

    /** Exit status for input the user must fix (bad file, bad option). */
    public static final int EXIT_BAD_INPUT = 2;
    /**
     * Exit status when the work was done but a trace held no context switch (its logger ran without the CSWITCH
     * flag): the output is empty or lacks that file's rows, and a script should not take it for a quiet machine.
     */
    public static final int EXIT_NO_SWITCHES = 3;
    /** Exit status for anything else that went wrong (Kafka, a stage, a bug). */
    public static final int EXIT_FAILURE = 1;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return commandLine().execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Swapstream());
        // every duration option is checked where it is given; --window options name their own converter
        cl.registerConverter(java.time.Duration.class, new Durations.Positive());
        for (CommandLine sub : cl.getSubcommands().values()) {
            CommandSpec spec = sub.getCommandSpec();
            if (!(sub.getCommand() instanceof CommandLine.HelpCommand)) spec.mixinStandardHelpOptions(true);
            spec.usageMessage().showDefaultValues(true);
        }
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine cmd = ex.getCommandLine();
            cmd.getErr().println("swapstream: " + Durations.optionLine(ex.getMessage()) + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
            return EXIT_BAD_INPUT;
        });
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            Throwable e = unwrap(ex);
            PrintWriter err = cmd.getErr();
            String denied = deniedLine(cmd.getCommand(), e);
            if (denied != null) {
                err.println("swapstream: " + denied);
                err.flush();
                return EXIT_FAILURE;
            }
            err.println("swapstream: " + userMessage(e));
            if (exitCode(e) == EXIT_FAILURE && System.getenv("SWAPSTREAM_DEBUG") != null) e.printStackTrace(err);
            err.flush();
            return exitCode(e);
        });
        return cl;
    }

    /** The one line of a right Kafka refused, when {@code e} is one and the command says whose; else null. */
    static String deniedLine(Object command, Throwable e) {
        if (!(command instanceof Denials d)) return null;
        try {
            return d.denied().line(e);
        } catch (RuntimeException unknown) {
            return null; // the command's own options are at fault: said by the usual line
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof UncheckedIOException || e instanceof ExecutionException || e instanceof CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    static int exitCode(Throwable e) {
        e = unwrap(e);
        if (e instanceof UserInputException || e instanceof EtlFormatException || e instanceof IllegalArgumentException
                || e instanceof FileSystemException) {
            return EXIT_BAD_INPUT;
        }
        return EXIT_FAILURE;
    }

    /** One line for the user: what happened, never a class name or a stack trace. */
    public static String userMessage(Throwable e) {
        e = unwrap(e);
        // a registry's refusal may come wrapped by Kafka Streams (a serializer's first record of a topic)
        for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof io.swapstream.schemas.serde.SchemaRegistryException) return c.getMessage();
            // state of a release this build does not read (an ingester's position, say): what it is and what to do
            if (c instanceof io.swapstream.schemas.state.StateFormat.IncompatibleStateException) return c.getMessage();
        }
        if (e instanceof UserInputException || e instanceof ServiceException || e instanceof EtlFormatException) return e.getMessage();
        if (e instanceof NoSuchFileException n) return n.getFile() + ": no such file";
        if (e instanceof AccessDeniedException a) return a.getFile() + ": permission denied";
        if (e instanceof FileSystemException f) return f.getFile() + ": " + (f.getReason() == null ? "cannot be read" : f.getReason());
        if (e instanceof IllegalArgumentException && e.getMessage() != null) return e.getMessage();
        // a stage setting its ConfigDef refused (in --client-config, say): Kafka's own line names the key
        if (e instanceof org.apache.kafka.common.config.ConfigException && e.getMessage() != null) return e.getMessage();
        if (e instanceof TimeoutException) return "Kafka did not answer in time: is the broker running and reachable?";
        if (e instanceof AuthenticationException) return "Kafka refused the credentials: " + e.getMessage();
        if (e instanceof AuthorizationException) return "Kafka refused the operation: " + e.getMessage();
        if (e instanceof KafkaException && e.getMessage() != null) return "Kafka: " + e.getMessage();
        if (e instanceof IOException && e.getMessage() != null) return e.getMessage();
        return "internal error, please report it (SWAPSTREAM_DEBUG=1 prints the details)";
    }
}
