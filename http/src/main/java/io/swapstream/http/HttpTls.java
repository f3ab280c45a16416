package io.swapstream.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A stage's HTTPS ({@code --http-tls KEYSTORE}): the key store's key and certificate serve HTTPS, and
 * its certificates are what a stage trusts when it asks another instance of its application (every
 * instance is given the same key store, or certificates from one authority in it).
 *
 * @param server the context the stage's HTTPS server uses
 * @param client the context its requests to other instances use
 */
public record HttpTls(SSLContext server, SSLContext client) {
    /** The environment variable holding the key store's password (empty when unset). */
    static final String PASSWORD_ENV = "SWAPSTREAM_HTTP_TLS_PASSWORD";

    public static HttpTls load(Path keyStore) {
        String env = System.getenv(PASSWORD_ENV);
        return load(keyStore, env == null ? new char[0] : env.toCharArray());
    }

    public static HttpTls load(Path keyStore, char[] password) {
        try (InputStream in = Files.newInputStream(keyStore)) {
            KeyStore ks = KeyStore.getInstance(keyStore.toString().endsWith(".jks") ? "JKS" : "PKCS12");
            ks.load(in, password);
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(ks, password);
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(ks);
            SSLContext server = SSLContext.getInstance("TLS");
            server.init(keys.getKeyManagers(), null, null);
            SSLContext client = SSLContext.getInstance("TLS");
            client.init(null, trust.getTrustManagers(), null);
            return new HttpTls(server, client);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--http-tls " + keyStore + ": cannot use it as a key store (" + e.getMessage()
                    + "); its password comes from $" + PASSWORD_ENV);
        }
    }
}
