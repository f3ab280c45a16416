package io.swapstream.http;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Which names (processes, hosts) get series of their own: at most {@code limit}, those with the most ready
 * time lately (a score that halves every hour of window time). A name takes an admitted one's place only
 * when its score is twice that name's, so names near the limit do not swap at every window and each
 * series lives long enough for rate() to mean something.
 */
final class TopNames {
    static final long HALF_LIFE_NANOS = 3_600_000_000_000L;
    /** A name must outscore the weakest admitted one by this factor to take its place. */
    static final double CHALLENGE = 2.0;

    private final int limit;
    /** Each name's score at {@code at}: its ready time, decayed. */
    private final Map<String, double[]> scores = new HashMap<>();
    private final Set<String> admitted = new HashSet<>();
    private long latestNanos = Long.MIN_VALUE;

    TopNames(int limit) {
        this.limit = limit;
    }

    /** What {@link #note} decided: whether the name has a series, and the name it displaced (null for none). */
    record Admission(boolean admitted, String displaced) {}

    private static final Admission IN = new Admission(true, null);
    private static final Admission OUT = new Admission(false, null);

    /** Counts a row's ready time for its name in the window starting at {@code windowNanos}, and says whether the name has a series. */
    Admission note(String name, long readyNanos, long windowNanos) {
        if (windowNanos > latestNanos) {
            latestNanos = windowNanos;
            forgetFaded();
        }
        double[] s = scores.computeIfAbsent(name, n -> new double[] {0, windowNanos});
        s[0] = scoreAt(s, windowNanos) + readyNanos;
        s[1] = Math.max(s[1], windowNanos);
        if (admitted.contains(name)) return IN;
        if (admitted.size() < limit) {
            admitted.add(name);
            return IN;
        }
        if (limit == 0) return OUT;
        String weakest = null;
        double weakestScore = Double.MAX_VALUE;
        for (String a : admitted) {
            double v = scoreAt(scores.get(a), latestNanos);
            if (v < weakestScore) {
                weakestScore = v;
                weakest = a;
            }
        }
        if (scoreAt(s, latestNanos) <= CHALLENGE * weakestScore) return OUT;
        admitted.remove(weakest);
        admitted.add(name);
        return new Admission(true, weakest);
    }

    boolean admitted(String name) {
        return admitted.contains(name);
    }

    private static double scoreAt(double[] s, long nanos) {
        return nanos <= s[1] ? s[0] : s[0] * Math.pow(0.5, (double) (nanos - s[1]) / HALF_LIFE_NANOS);
    }

    /** Names without a series whose score has faded to nothing (a day of halvings) leave the map. */
    private void forgetFaded() {
        for (Iterator<Map.Entry<String, double[]>> it = scores.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, double[]> e = it.next();
            if (!admitted.contains(e.getKey()) && latestNanos - e.getValue()[1] > 24 * HALF_LIFE_NANOS) it.remove();
        }
    }
}
