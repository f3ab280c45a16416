package io.swapstream.http;

import com.sun.net.httpserver.BasicAuthenticator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * The users a stage's HTTP side lets in ({@code --http-users FILE}): one line per user,
 * {@code name:pbkdf2-sha256:ITERATIONS:SALT:HASH} (salt and hash in base64), as {@code swapstream http-user}
 * prints them; blank lines and lines starting with # are skipped. Passwords are checked with the JDK's
 * PBKDF2; a pair that passed once is remembered (as a digest) so that a dashboard polling every 2 s does
 * not pay a deliberately slow hash per request.
 */
public final class HttpUsers extends BasicAuthenticator {
    static final String SCHEME = "pbkdf2-sha256";
    static final int ITERATIONS = 210_000;

    private record Entry(int iterations, byte[] salt, byte[] hash) {}

    private final Map<String, Entry> users;
    private final Set<String> passed = ConcurrentHashMap.newKeySet();

    private HttpUsers(Map<String, Entry> users) {
        super("swapstream", StandardCharsets.UTF_8);
        this.users = users;
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
        return new HttpUsers(users);
    }

    /** The users file's line for {@code name} with {@code password}, with a new random salt. */
    public static String line(String name, char[] password) {
        byte[] salt = new byte[16];
        new SecureRandom().nextBytes(salt);
        return name + ":" + SCHEME + ":" + ITERATIONS + ":" + Base64.getEncoder().encodeToString(salt) + ":"
                + Base64.getEncoder().encodeToString(hash(password, salt, ITERATIONS));
    }

    @Override
    public boolean checkCredentials(String name, String password) {
        Entry e = users.get(name);
        if (e == null) return false;
        String remembered = digest(name, password, e.salt());
        if (passed.contains(remembered)) return true;
        boolean ok = MessageDigest.isEqual(e.hash(), hash(password.toCharArray(), e.salt(), e.iterations()));
        if (ok) passed.add(remembered);
        return ok;
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
