package io.swapstream.export;

import io.swapstream.schemas.avro.HostStats;
import java.util.List;
import java.util.Set;

/**
 * {@code archive --hosts} and {@code --when}: which minutes of a host the archive keeps, decided on the host's roll-up
 * row for each window ({@code etw.host-stats}). {@code --hosts} alone keeps every window of those hosts;
 * {@code --when} alone keeps, on every host, each window whose row meets one of the conditions and the window before
 * it (what led up to it); both together keep the windows of those hosts that meet one.
 *
 * @param hosts the hosts kept; empty: every host
 * @param when  the conditions, one enough; empty: every window of the hosts
 */
public record FlightRecorder(Set<String> hosts, List<HostCondition> when) {
    /** A time range of one host, [fromNanos, toNanos), Unix epoch nanoseconds. */
    public record Minute(String host, long fromNanos, long toNanos) {}

    public FlightRecorder {
        hosts = Set.copyOf(hosts);
        when = List.copyOf(when);
        if (hosts.isEmpty() && when.isEmpty()) throw new IllegalArgumentException("a flight recorder keeps chosen hosts, chosen minutes or both");
    }

    /** The condition {@code row} meets, or null; with no --when, every row meets it. */
    public HostCondition met(HostStats row) {
        for (HostCondition c : when) if (c.holds(row)) return c;
        return null;
    }

    /** The windows to keep for {@code row}, earlier first: none, its own, or the one before and its own. */
    public List<Minute> minutes(HostStats row) {
        String host = row.getHost();
        if (!hosts.isEmpty() && !hosts.contains(host)) return List.of();
        long start = row.getWindowStartNanos();
        long end = row.getWindowEndNanos();
        Minute own = new Minute(host, start, end);
        if (when.isEmpty()) return List.of(own);
        if (met(row) == null) return List.of();
        return List.of(new Minute(host, start - (end - start), start), own);
    }
}
