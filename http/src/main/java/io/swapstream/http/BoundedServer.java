package io.swapstream.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The server under a stage's routes, bounded so that a few sockets cannot stop it: what a client may hold (time,
 * header bytes, threads) and what every answer carries.
 */
final class BoundedServer {
    // Jetty, not the JDK's server: requests and TLS handshakes wait for bytes without a thread, under idle timeouts
    /** A request's headers beyond this get a 431. */
    static final int MAX_HEADER_BYTES = 16 * 1024;
    /** A read or a write that makes no progress for this long closes the connection. */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** A connection whose first request has not come whole in this long is closed, however slowly it trickles. */
    static final Duration FIRST_REQUEST_TIMEOUT = Duration.ofSeconds(60);
    /** Request threads at most; connections waiting for bytes hold none. */
    static final int MAX_THREADS = 64;
    /**
     * What a page may load: its own scripts, styles and images, and requests to this stage; never framed. The pages
     * keep their styles and scripts in files of their own for it.
     */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
            + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private BoundedServer() { }

    /** A server with one connector on {@code host:port}, HTTPS when {@code tls} is given, bound now and not started. */
    static ServerConnector bind(String host, int port, HttpTls tls) throws IOException {
        return bind(host, port, tls, FIRST_REQUEST_TIMEOUT);
    }

    static ServerConnector bind(String host, int port, HttpTls tls, Duration firstRequestTimeout) throws IOException {
        QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS, 4);
        threads.setName("swapstream-http");
        threads.setDaemon(true);
        Server server = new Server(threads);
        HttpConfiguration config = new HttpConfiguration();
        config.setRequestHeaderSize(MAX_HEADER_BYTES);
        config.setSendServerVersion(false);
        config.setSendXPoweredBy(false);
        // a session id may hold a '%': %25 is decoded once to it; an encoded '/' or '.' is still refused (400)
        config.setUriCompliance(UriCompliance.DEFAULT.with("swapstream", UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING));
        ConnectionFactory http = new HttpConnectionFactory(config);
        ServerConnector connector;
        if (tls != null) {
            SslContextFactory.Server ssl = new SslContextFactory.Server();
            ssl.setSslContext(tls.server());
            connector = new ServerConnector(server, 1, 1, new SslConnectionFactory(ssl, http.getProtocol()), http);
        } else {
            connector = new ServerConnector(server, 1, 1, http);
        }
        connector.setHost(host);
        connector.setPort(port);
        connector.setAcceptQueueSize(64);
        connector.setIdleTimeout(IDLE_TIMEOUT.toMillis());
        connector.addBean(new FirstRequestDeadline(connector, firstRequestTimeout));
        server.addConnector(connector);
        server.setErrorHandler(new JsonErrors());
        server.setStopTimeout(0);
        connector.open();
        return connector;
    }

    /** What every answer carries, errors included: no type sniffing, no framing, and the pages' own content only. */
    static void securityHeaders(HttpFields.Mutable headers) {
        headers.put("X-Content-Type-Options", "nosniff");
        headers.put("X-Frame-Options", "DENY");
        headers.put("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        headers.put("Referrer-Policy", "no-referrer");
    }

    /** Jetty's own refusals (a header too large, a bad request line) in the one error shape, with the same headers. */
    private static final class JsonErrors extends ErrorHandler {
        @Override
        protected void generateResponse(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response, int code,
                                        String message, Throwable cause, Callback callback) {
            HttpFields.Mutable h = response.getHeaders();
            securityHeaders(h);
            h.put(HttpHeader.CONTENT_TYPE, "application/json");
            h.put(HttpHeader.CACHE_CONTROL, "no-store");
            response.write(true, ByteBuffer.wrap(body(code, message)), callback);
        }

        @Override
        public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
            securityHeaders(fields);
            fields.put(HttpHeader.CONTENT_TYPE, "application/json");
            fields.put(HttpHeader.CACHE_CONTROL, "no-store");
            return ByteBuffer.wrap(body(status, reason));
        }

        private static byte[] body(int status, String message) {
            return StageHttp.Response.error(status, message == null ? org.eclipse.jetty.http.HttpStatus.getMessage(status) : message).body();
        }
    }

    /**
     * Closes a connection that has not finished its first request within its timeout: the idle
     * timeout alone lets a client that sends a byte now and then hold its socket for ever.
     */
    private record FirstRequestDeadline(ServerConnector connector, Duration timeout) implements Connection.Listener {
        @Override
        public void onOpened(Connection connection) {
            // over TLS the HTTP connection inside is watched; closing it closes the TLS one
            if (connection instanceof SslConnection) return;
            connector.getScheduler().schedule(() -> {
                if (connection.getMessagesIn() <= 0 && connection.getEndPoint().isOpen()) connection.getEndPoint().close();
            }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
