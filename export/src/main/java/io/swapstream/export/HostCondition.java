package io.swapstream.export;

import io.swapstream.schemas.RecordFields;
import io.swapstream.schemas.avro.HostStats;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.avro.Schema;

/**
 * {@code archive --when 'FIELD OP VALUE'}: a test of one host roll-up row ({@code HostStats} on {@code etw.host-stats},
 * one a host and window). FIELD is one of the record's numeric fields, the {@code Nanos} on the end optional
 * ({@code readyP99} is {@code readyP99Nanos}); OP is {@code >}, {@code >=}, {@code <} or {@code <=}; VALUE is a
 * duration with its unit for a field in nanoseconds ({@code 10ms}, {@code 1.5s}, {@code 250us}, {@code 800ns}) and a
 * plain number for a count. A field the row leaves null (no ready time in the window) meets no condition.
 *
 * @param field     the record's field, as the schema names it
 * @param operator  one of {@code > >= < <=}
 * @param threshold the value the field is compared with, in the field's unit
 * @param text      the condition as given, for the log
 */
public record HostCondition(String field, String operator, long threshold, String text) {
    private static final Pattern FORM = Pattern.compile("\\s*([A-Za-z][A-Za-z0-9]*)\\s*(>=|<=|>|<)\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([a-zµ]*)\\s*");
    private static final List<String> FIELDS = RecordFields.numeric(HostStats.SCHEMA$);

    public static HostCondition parse(String text) {
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("--when: '" + text + "' is not FIELD OP VALUE, e.g. 'readyP99 > 10ms' (OP one of > >= < <=)");
        }
        String field = field(m.group(1), text);
        boolean nanos = field.endsWith("Nanos");
        String unit = m.group(4);
        BigDecimal number = new BigDecimal(m.group(3));
        long threshold;
        if (nanos) {
            if (unit.isEmpty()) throw new IllegalArgumentException("--when: '" + text + "': " + field + " is a time: give the unit, e.g. " + m.group(3) + "ms");
            threshold = nanosOf(number, unit, text);
        } else {
            if (!unit.isEmpty()) throw new IllegalArgumentException("--when: '" + text + "': " + field + " is a count, a plain number, not " + m.group(3) + unit);
            try {
                threshold = number.longValueExact();
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("--when: '" + text + "': " + field + " is a count: a whole number, not " + m.group(3));
            }
        }
        return new HostCondition(field, m.group(2), threshold, text.strip());
    }

    /** The schema's name of {@code given}: a numeric field, with or without its {@code Nanos}. */
    private static String field(String given, String text) {
        for (String f : FIELDS) {
            if (f.equals(given) || f.equals(given + "Nanos")) return f;
        }
        for (String f : FIELDS) {
            if (f.equalsIgnoreCase(given) || f.equalsIgnoreCase(given + "Nanos")) return f;
        }
        throw new IllegalArgumentException("--when: '" + text + "': " + given + " is not a numeric field of the host roll-up (HostStats): one of "
                + String.join(", ", FIELDS.stream().map(f -> f.endsWith("Nanos") ? f.substring(0, f.length() - 5) : f).toList()));
    }

    private static long nanosOf(BigDecimal number, String unit, String text) {
        long scale = switch (unit.toLowerCase(Locale.ROOT)) {
            case "ns" -> 1L;
            case "us", "µs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m", "min" -> 60_000_000_000L;
            default -> throw new IllegalArgumentException("--when: '" + text + "': the unit '" + unit + "' is not one of ns, us, ms, s, m");
        };
        try {
            return number.multiply(BigDecimal.valueOf(scale)).setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("--when: '" + text + "': " + number + unit + " is too large");
        }
    }

    /** Whether {@code row} meets the condition; a null field meets none. */
    public boolean holds(HostStats row) {
        Schema.Field f = row.getSchema().getField(field);
        Object v = row.get(f.pos());
        if (!(v instanceof Number n)) return false;
        // the numeric fields are whole numbers (long or int); a double one is compared as a double
        int c = v instanceof Double || v instanceof Float ? Double.compare(n.doubleValue(), threshold) : Long.compare(n.longValue(), threshold);
        return switch (operator) {
            case ">" -> c > 0;
            case ">=" -> c >= 0;
            case "<" -> c < 0;
            default -> c <= 0;
        };
    }

    @Override
    public String toString() {
        return text;
    }
}
