package io.swapstream.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * The users a stage's HTTP side lets in ({@code --http-users FILE}): one line per user,
 * {@code name:pbkdf2-sha256:ITERATIONS:SALT:HASH} (salt and hash in base64), as {@code swapstream http-user}
 * prints them; blank lines and lines starting with # are skipped. Passwords are checked with the JDK's
 * PBKDF2; a pair that passed once is remembered (as a digest) so that a dashboard polling every 2 s does
 * not pay a deliberately slow hash per request.
 *
 * <p>An unknown name costs what a known one does (its password is checked against a made-up hash), so that the
 * time of an answer does not tell which names exist. After {@value #FREE_FAILURES} failed logins from an address,
 * or for a name, each further one makes it wait, twice as long each time up to {@link #MAX_WAIT}; a login while it
 * waits is refused unchecked (429). A success, or {@link #FORGET} without a failure, clears it.
 */
public final class HttpUsers {
    static final String SCHEME = "pbkdf2-sha256";
    static final int ITERATIONS = 210_000;
    /** Failed logins from an address, or for a name, before it waits. */
    static final int FREE_FAILURES = 5;
    static final Duration FIRST_WAIT = Duration.ofSeconds(1);
    /** At most: a name anyone can make wait is not locked out for longer. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** Failures this old, with none since, are forgotten. */
    static final Duration FORGET = Duration.ofMinutes(15);
    /** Addresses and names with failures kept at most; beyond it the forgotten ones go first, then all. */
    static final int MAX_TRACKED = 10_000;

    private record Entry(int iterations, byte[] salt, byte[] hash) {}

    /** An address's or a name's failed logins: how many, and when the last one was. */
    private record Failures(int count, long lastMillis) {
        long waitUntil() {
            if (count < FREE_FAILURES) return 0;
            long wait = Math.min(MAX_WAIT.toMillis(), FIRST_WAIT.toMillis() << Math.min(20, count - FREE_FAILURES));
            return lastMillis + wait;
        }
    }

    /**
     * A login's outcome.
     *
     * @param in          the user is let in
     * @param waitSeconds when more than 0, the login was not checked: the address or name waits this long
     */
    public record Login(boolean in, long waitSeconds) {}

    private final Map<String, Entry> users;
    /** What an unknown name's password is checked against, as costly as a real user's. */
    private final Entry dummy;
    private final Set<String> passed = ConcurrentHashMap.newKeySet();
    private final Map<String, Failures> byAddress = new ConcurrentHashMap<>();
    private final Map<String, Failures> byName = new ConcurrentHashMap<>();
    private final AtomicLong dummyChecks = new AtomicLong();
    private final Clock clock;

    private HttpUsers(Map<String, Entry> users, Clock clock) {
        this.users = users;
        this.clock = clock;
        int iterations = users.values().stream().mapToInt(Entry::iterations).max().orElse(ITERATIONS);
        byte[] salt = new byte[16];
        byte[] password = new byte[16];
        SecureRandom random = new SecureRandom();
        random.nextBytes(salt);
        random.nextBytes(password);
        this.dummy = new Entry(iterations, salt, hash(Base64.getEncoder().encodeToString(password).toCharArray(), salt, iterations));
    }

    /** The same users, timing their waits by {@code clock}. */
    HttpUsers withClock(Clock clock) {
        return new HttpUsers(users, clock);
    }

    /** The users of {@code file}; a line it cannot read is a {@link IllegalArgumentException} naming the file and line. */
    public static HttpUsers read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("--http-users " + file + ": cannot read it (" + e.getMessage() + ")");
        }
        Map<String, Entry> users = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] f = line.split(":");
            try {
                if (f.length != 5 || !f[1].equals(SCHEME) || f[0].isEmpty()) throw new IllegalArgumentException();
                users.put(f[0], new Entry(Integer.parseInt(f[2]), Base64.getDecoder().decode(f[3]), Base64.getDecoder().decode(f[4])));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--http-users " + file + " line " + (i + 1) + ": not name:" + SCHEME
                        + ":ITERATIONS:SALT:HASH (make one with swapstream http-user NAME)");
            }
        }
        if (users.isEmpty()) throw new IllegalArgumentException("--http-users " + file + ": no user in it");
        return new HttpUsers(users, Clock.systemUTC());
    }

    /** The users file's line for {@code name} with {@code password}, with a new random salt. */
    public static String line(String name, char[] password) {
        return line(name, password, ITERATIONS);
    }

    static String line(String name, char[] password, int iterations) {
        byte[] salt = new byte[16];
        new SecureRandom().nextBytes(salt);
        return name + ":" + SCHEME + ":" + iterations + ":" + Base64.getEncoder().encodeToString(salt) + ":"
                + Base64.getEncoder().encodeToString(hash(password, salt, iterations));
    }

    /**
     * Checks a request's {@code Authorization} header from {@code address}; no header is a refusal that counts as no
     * failure (a browser's first request has none).
     */
    public Login login(String address, String authorization) {
        if (authorization == null) return new Login(false, 0);
        String name = null;
        String password = null;
        if (authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String pair = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
                int colon = pair.indexOf(':');
                if (colon > 0) {
                    name = pair.substring(0, colon);
                    password = pair.substring(colon + 1);
                }
            } catch (IllegalArgumentException e) {
                // not base64: a failed login like any other
            }
        }
        long now = clock.millis();
        long until = Math.max(waitUntil(byAddress, address), name == null ? 0 : waitUntil(byName, name));
        if (until > now) return new Login(false, Math.max(1, (until - now + 999) / 1000));
        if (name != null && checkCredentials(name, password)) {
            byAddress.remove(address);
            byName.remove(name);
            return new Login(true, 0);
        }
        failed(byAddress, address, now);
        if (name != null) failed(byName, name, now);
        return new Login(false, 0);
    }

    /** Whether {@code password} is {@code name}'s; an unknown name's is checked too, against a made-up hash. */
    public boolean checkCredentials(String name, String password) {
        Entry e = users.get(name);
        if (e == null) {
            dummyChecks.incrementAndGet();
            MessageDigest.isEqual(dummy.hash(), hash(password.toCharArray(), dummy.salt(), dummy.iterations()));
            return false;
        }
        String remembered = digest(name, password, e.salt());
        if (passed.contains(remembered)) return true;
        boolean ok = MessageDigest.isEqual(e.hash(), hash(password.toCharArray(), e.salt(), e.iterations()));
        if (ok) passed.add(remembered);
        return ok;
    }

    /** How many passwords were checked against the made-up hash: unknown names, each paying a real user's hash. */
    long dummyChecks() {
        return dummyChecks.get();
    }

    private long waitUntil(Map<String, Failures> failures, String key) {
        Failures f = failures.get(key);
        return f == null ? 0 : f.waitUntil();
    }

    private void failed(Map<String, Failures> failures, String key, long now) {
        if (failures.size() >= MAX_TRACKED) {
            failures.values().removeIf(f -> now - f.lastMillis() > FORGET.toMillis());
            if (failures.size() >= MAX_TRACKED) failures.clear();
        }
        failures.compute(key, (k, f) -> f == null || now - f.lastMillis() > FORGET.toMillis() ? new Failures(1, now)
                : new Failures(f.count() + 1, now));
    }

    private static byte[] hash(char[] password, byte[] salt, int iterations) {
        try {
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(new PBEKeySpec(password, salt, iterations, 256))
                    .getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("PBKDF2WithHmacSHA256 is not available in this JDK", e);
        }
    }

    private static String digest(String name, String password, byte[] salt) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(salt);
            d.update((name + '\u0000' + password).getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(d.digest());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
