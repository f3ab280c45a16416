package io.swapstream.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Durations on the command line, parsed and checked here alone: "60s", "500ms", "5m", "1h", "7d" or ISO-8601
 * ("PT1H"). Every duration option is a {@link Duration}; picocli refuses a bad one in one line naming the option,
 * before the command starts. A window of 0 means the whole session, wherever a window is taken.
 */
public final class Durations {
    private Durations() {}

    /** Duration suffixes and their nanoseconds, "ms" before "m" and "s", which it ends with. */
    private static final List<Map.Entry<String, Long>> UNITS = List.of(Map.entry("ms", 1_000_000L),
            Map.entry("s", 1_000_000_000L), Map.entry("m", 60_000_000_000L), Map.entry("h", 3_600_000_000_000L),
            Map.entry("d", 86_400_000_000_000L));

    static Duration parse(String s) {
        String t = s.trim().toLowerCase();
        try {
            for (Map.Entry<String, Long> unit : UNITS) {
                if (!t.endsWith(unit.getKey())) continue;
                String number = t.substring(0, t.length() - unit.getKey().length());
                // an ISO-8601 duration ends with a unit letter too (PT1H, P1D): only digits before the suffix
                if (number.matches("-?[0-9]+")) return Duration.ofNanos(Math.multiplyExact(Long.parseLong(number), unit.getValue()));
            }
            return Duration.parse(s.trim());
        } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
            throw new TypeConversionException("'" + s + "' is not a duration (for example 60s, 500ms, 5m, 7d)");
        }
    }

    /** Any duration option but a window: more than 0. Registered for every {@link Duration} option. */
    static final class Positive implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String s) {
            Duration d = parse(s);
            if (d.isNegative() || d.isZero()) throw new TypeConversionException("must be more than 0, not " + s);
            return d;
        }
    }

    /** A window: more than 0, or 0 for whole-session statistics alone. */
    public static final class Window implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String s) {
            Duration d = parse(s);
            if (d.isNegative()) throw new TypeConversionException("must be 0 (the whole session) or more, not " + s);
            return d;
        }
    }

    /** picocli's "Invalid value for option '--x': WHY" as this command's other lines say it: "--x WHY" or "--x: WHY". */
    static String optionLine(String message) {
        var m = java.util.regex.Pattern.compile("Invalid value for option '([^']+)': (.*)", java.util.regex.Pattern.DOTALL).matcher(message);
        if (!m.matches()) return message;
        String why = m.group(2);
        return m.group(1) + (why.startsWith("must be") ? " " : ": ") + why;
    }
}
