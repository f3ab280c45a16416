package io.swapstream.cli;

import io.swapstream.decode.ExpansionCounters;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import picocli.CommandLine.Model.CommandSpec;

/** Option parsing shared by the commands. */
final class Options {
    private Options() {}

    /** The host of a trace: given, or the file name without its extension. */
    static String host(String given, Path file) {
        if (given != null) return given;
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    static Integer maxWaitReason(String s) {
        if (s == null) return null;
        try {
            int v = Integer.decode(s);
            if (v <= 0 || v > 63) throw new IllegalArgumentException("--max-wait-reason must be between 1 and 0x3F, not " + s);
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--max-wait-reason: '" + s + "' is not a number");
        }
    }

    /** "60s", "500ms", "2m", "1h" or an ISO-8601 duration, as nanoseconds. */
    static long duration(String s) {
        if (s == null) return 0;
        String t = s.trim().toLowerCase();
        try {
            if (t.endsWith("ms")) return Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 2)), 1_000_000L);
            if (t.endsWith("s")) return Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 1)), 1_000_000_000L);
            if (t.endsWith("m")) return Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 1)), 60_000_000_000L);
            if (t.endsWith("h")) return Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 1)), 3_600_000_000_000L);
            return Duration.parse(s).toNanos();
        } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + s + "' is not a duration (for example 60s, 500ms, 5m)");
        }
    }

    /** What the expansion could not make consistent, one line on stderr, so a user sees it beside the output. */
    static void reportInconsistencies(CommandSpec spec, ExpansionCounters c) {
        StringBuilder b = new StringBuilder();
        note(b, c.emittedOutOfOrder, "switches arrived after later ones had been emitted (out of time order)");
        note(b, c.lateEvents, "thread/process events arrived after later items had been emitted");
        note(b, c.switchesBeforeNewThreadKnown, "switches were emitted before their processor named the new thread");
        note(b, c.queueLimitForced, "items left the merge at its memory limit");
        note(b, c.oldThreadNotLastSwitchedIn, "switches whose old thread was not the thread last switched in on that processor");
        note(b, c.emptyTidTableSlot, "compact packets pointed at an empty TID-table slot");
        if (b.length() > 0) spec.commandLine().getErr().println("swapstream: note: " + b);
    }

    private static void note(StringBuilder b, long n, String what) {
        if (n == 0) return;
        if (b.length() > 0) b.append("; ");
        b.append(n).append(' ').append(what);
    }
}
