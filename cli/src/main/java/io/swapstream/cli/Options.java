package io.swapstream.cli;

import io.swapstream.decode.merge.ExpansionCounters;
import io.swapstream.local.UserInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/** Option parsing and checks shared by the commands: every value is checked before work starts. */
public final class Options {
    private Options() {}

    /** The host of a trace: given, or the file name without its extension. */
    static String host(String given, Path file) {
        String host = given;
        if (host == null) {
            String name = file.getFileName().toString();
            int dot = name.lastIndexOf('.');
            host = dot > 0 ? name.substring(0, dot) : name;
        }
        return checkedHost(host, given != null ? "--host" : file.toString());
    }

    /** {@code host}, when it can begin a session id; else refused in one line naming {@code where} it came from. */
    public static String checkedHost(String host, String where) {
        String problem = io.swapstream.etw.LogfileHeader.hostProblem(host);
        if (problem != null) throw new UserInputException(where + ": " + problem + " (give another with --host)");
        return host;
    }

    /**
     * This machine's name, the host of the sessions {@code ingest --watch} publishes: Windows' COMPUTERNAME, else
     * what the network stack calls it, else HOSTNAME.
     */
    static String machineName() {
        String name = System.getenv("COMPUTERNAME");
        if (name == null || name.isBlank()) {
            try {
                name = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                name = System.getenv("HOSTNAME");
            }
        }
        if (name == null || name.isBlank()) throw new UserInputException("cannot tell this machine's name: give --host");
        // ':' separates a session id's parts
        return checkedHost(name.replace(':', '-'), "this machine's name");
    }

    static Integer maxWaitReason(String s) {
        if (s == null) return null;
        try {
            int v = Integer.decode(s);
            if (v <= 0 || v > 63) throw new UserInputException("--max-wait-reason must be between 1 and 0x3F, not " + s);
            return v;
        } catch (NumberFormatException e) {
            throw new UserInputException("--max-wait-reason: '" + s + "' is not a number (for example 0x28)");
        }
    }

    /** HOST:PORT, the port 0 to 65535. */
    public static void hostPort(String option, String s) {
        int colon = s.lastIndexOf(':');
        String why = null;
        if (colon <= 0) {
            why = "expected HOST:PORT";
        } else {
            try {
                int port = Integer.parseInt(s.substring(colon + 1));
                if (port < 0 || port > 65535) why = "the port must be 0 to 65535";
            } catch (NumberFormatException e) {
                why = "the port is not a number";
            }
        }
        if (why != null) throw new UserInputException(option + ": '" + s + "': " + why);
    }

    public static void atLeast(String option, long value, long min) {
        if (value < min) throw new UserInputException(option + " must be at least " + min + ", not " + value);
    }

    static void between(String option, double value, double min, double max) {
        if (!(value >= min && value <= max)) throw new UserInputException(option + " must be between " + min + " and " + max + ", not " + value);
    }

    /** Each trace file exists, is a regular file and can be read. */
    static void traceFiles(List<Path> files) {
        for (Path f : files) {
            if (!Files.exists(f)) throw new UserInputException(f + ": no such file");
            if (Files.isDirectory(f)) throw new UserInputException(f + ": is a directory, not an .etl file");
            if (!Files.isReadable(f)) throw new UserInputException(f + ": permission denied");
        }
    }

    /** The directory a new file goes into exists. */
    static void outputFile(String option, Path f) {
        Path dir = f.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) throw new UserInputException(option + ": directory " + dir + " does not exist");
        if (Files.isDirectory(f)) throw new UserInputException(option + ": " + f + " is a directory");
    }

    /**
     * What the expansion could not make consistent, one line on stderr, so a user sees it beside the output; the
     * exit status it calls for ({@link Swapstream#EXIT_NO_SWITCHES} for a file without a context switch, else 0).
     */
    static int reportExpansion(CommandSpec spec, Path file, ExpansionCounters c) {
        int status = c.switches == 0 ? Swapstream.EXIT_NO_SWITCHES : 0;
        if (c.switches == 0) {
            spec.commandLine().getErr().println("swapstream: note: " + file + " holds no context switches: it has no CSwitch"
                    + " (0x0524) or compact-batch (0x0525) events; the kernel logger writes them only with the CSWITCH flag");
        }
        StringBuilder b = new StringBuilder();
        note(b, c.switchesOutOfOrder, "switches arrived after later ones had been emitted (out of time order)");
        note(b, c.lateEvents, "thread/process events arrived after later items had been emitted");
        note(b, c.switchesBeforeNewThreadKnown, "switches were emitted before their processor named the new thread");
        note(b, c.queueLimitForced, "items left the merge at its memory limit");
        note(b, c.latenessLimitForced, "items left the merge at its maximum lateness");
        note(b, c.oldThreadNotLastSwitchedIn, "switches whose old thread was not the thread last switched in on that processor");
        note(b, c.emptyTidTableSlot, "compact packets pointed at an empty TID-table slot");
        if (b.length() > 0) spec.commandLine().getErr().println("swapstream: note: " + file + ": " + b);
        return status;
    }

    private static void note(StringBuilder b, long n, String what) {
        if (n == 0) return;
        if (b.length() > 0) b.append("; ");
        b.append(n).append(' ').append(what);
    }
}
