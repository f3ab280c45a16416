package io.swapstream.http;

import java.nio.ByteBuffer;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.util.Callback;

/**
 * Takes each request to its route: checks the user where the route asks for one, refuses what is not a GET or HEAD, and
 * writes the answer as the client reads it, with the security headers, its ETag and caching.
 */
final class StageDispatch extends Handler.Abstract {
    private final StageHttp http;

    StageDispatch(StageHttp http) {
        this.http = http;
    }

    @Override
    public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response, Callback callback) {
        StageHttp.Response r = answer(request, response);
        HttpFields.Mutable h = response.getHeaders();
        BoundedServer.securityHeaders(h);
        h.put(HttpHeader.CONTENT_TYPE, r.contentType());
        if (r.stream() != null) {
            h.put(HttpHeader.CONTENT_DISPOSITION, "attachment; filename=\"" + r.stream().fileName() + "\"");
            h.put(HttpHeader.CACHE_CONTROL, "no-store");
            response.setStatus(r.status());
            if (request.getMethod().equals("HEAD")) {
                response.write(true, null, callback);
                return true;
            }
            // the response completes when the stream closes (its last write): only then is the handling done
            try (java.io.OutputStream out = org.eclipse.jetty.io.Content.Sink.asOutputStream(response)) {
                java.io.BufferedOutputStream buffered = new java.io.BufferedOutputStream(out, 1 << 16);
                r.stream().writeTo(buffered);
                buffered.flush();
            } catch (Throwable e) {
                callback.failed(e);
                return true;
            }
            callback.succeeded();
            return true;
        }
        if (r.etag() != null) {
            // the client asks again each time (no-cache), and a 304 tells it its copy holds
            h.put(HttpHeader.ETAG, r.etag());
            h.put(HttpHeader.CACHE_CONTROL, "no-cache");
        } else {
            h.put(HttpHeader.CACHE_CONTROL, "no-store");
        }
        response.setStatus(r.status());
        boolean noBody = request.getMethod().equals("HEAD") || r.status() == 304;
        if (r.status() != 304) h.put(HttpHeader.CONTENT_LENGTH, r.body().length);
        // written as the client reads it, with no thread waiting on a slow one
        response.write(true, noBody ? null : ByteBuffer.wrap(r.body()), callback);
        return true;
    }

    private StageHttp.Response answer(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response) {
        var fields = request.getHeaders();
        String path = null;
        StageHttp.Routed routed = null;
        try {
            path = StageHttp.decodedPath(request.getHttpURI().getPath());
            routed = path == null ? null : http.routeFor(path);
        } catch (IllegalArgumentException e) {
            return StageHttp.Response.error(400, "the path is not a URI path");
        }
        if (routed == null || !routed.open()) {
            if (http.users != null) {
                HttpUsers.Login login = http.users.login(org.eclipse.jetty.server.Request.getRemoteAddr(request),
                        fields.get(HttpHeader.AUTHORIZATION));
                if (login.waitSeconds() > 0) {
                    response.getHeaders().put(HttpHeader.RETRY_AFTER, login.waitSeconds());
                    return StageHttp.Response.error(429, "too many failed logins: ask again in " + login.waitSeconds() + " s");
                }
                if (!login.in()) {
                    response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Basic realm=\"swapstream\", charset=\"UTF-8\"");
                    return StageHttp.Response.error(401, "a user of --http-users is asked for (basic authentication)");
                }
            }
            if (routed == null) return StageHttp.Response.error(404, "no such resource: " + request.getHttpURI().getPath());
        }
        StageHttp.Response r;
        try {
            if (!request.getMethod().equals("GET") && !request.getMethod().equals("HEAD")) {
                // read-only: the one error shape, and what it takes instead
                response.getHeaders().put(HttpHeader.ALLOW, StageHttp.ALLOWED_METHODS);
                r = StageHttp.Response.error(405, request.getMethod() + " is not taken here: only " + StageHttp.ALLOWED_METHODS);
            } else {
                Map<String, String> query;
                try {
                    query = StageHttp.query(request.getHttpURI().getQuery());
                } catch (IllegalArgumentException e) {
                    throw new StageHttp.HttpProblem(400, "the query is not URL-encoded");
                }
                // the credentials go on to other instances only where there are users to check them
                r = routed.route().answer(new StageHttp.Request(path, query, fields.get(HttpHeader.IF_NONE_MATCH),
                        http.users == null ? null : fields.get(HttpHeader.AUTHORIZATION), fields.get(HttpHeader.ACCEPT)));
            }
        } catch (StageHttp.HttpProblem e) {
            r = StageHttp.Response.error(e.status, e.getMessage());
        } catch (Exception e) {
            r = StageHttp.Response.error(500, routed.describe().apply(e));
        }
        // every JSON answer has an ETag: its version where it has one, else its bytes'; a client holding it gets a 304
        if (r.status() == 200 && r.etag() == null && r.contentType().startsWith("application/json")) {
            String etag = StageHttp.etagOf(r.body());
            r = etag.equals(fields.get(HttpHeader.IF_NONE_MATCH)) ? StageHttp.Response.notModified(etag)
                    : new StageHttp.Response(200, r.contentType(), r.body(), etag);
        }
        return r;
    }
}
