package io.swapstream.http;

import io.swapstream.export.RangeExport;
import io.swapstream.ingest.RawSessionReader;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /api/sessions/{id}/etl[?from=&to=]}: a session out of {@code etw.raw-buffers} as an .etl file, streamed
 * as it is read (the {@code export} command's file: {@link RawSessionReader}, {@link RangeExport}). What can be
 * refused is refused before the first byte, with 404 or 400 in the one error shape: a session the topic does not
 * hold (whole), a range with no event of it, a bad time.
 */
public final class EtlApi {
    public static final String PREFIX = "/api/sessions/";
    static final String CONTENT_TYPE = "application/octet-stream";

    private final String bootstrap;
    private final String topicPrefix;
    private final Map<String, Object> clientConfig;

    public EtlApi(String bootstrap, String topicPrefix, Map<String, Object> clientConfig) {
        this.bootstrap = bootstrap;
        this.topicPrefix = topicPrefix;
        this.clientConfig = Map.copyOf(clientConfig);
    }

    public StageHttp.Response answer(StageHttp.Request request) throws Exception {
        String path = request.path();
        if (!path.startsWith(PREFIX) || !path.endsWith("/etl") || path.length() <= PREFIX.length() + "/etl".length()) {
            throw new StageHttp.HttpProblem(404, "no such resource: " + path);
        }
        // the path came decoded, once; a session id holds no '/'
        String session = path.substring(PREFIX.length(), path.length() - "/etl".length());
        if (session.contains("/")) throw new StageHttp.HttpProblem(404, "no such resource: " + path);
        Map<String, String> q = request.query();
        StageHttp.allowOnly(q, List.of("from", "to"));
        try {
            RawSessionReader.startMillis(session);
        } catch (IllegalArgumentException e) {
            throw new StageHttp.HttpProblem(404, e.getMessage());
        }
        if (q.containsKey("from") != q.containsKey("to")) throw new StageHttp.HttpProblem(400, "from and to go together");
        String name = fileName(session);
        if (!q.containsKey("from")) {
            // a look at the session's first record, so that a session not held is a 404, not a broken download
            try (RawSessionReader probe = reader()) {
                probe.probe(session);
            } catch (RawSessionReader.Unavailable e) {
                throw new StageHttp.HttpProblem(404, e.getMessage());
            }
            return StageHttp.Response.streamed(CONTENT_TYPE, body(name, out -> {
                try (RawSessionReader r = reader()) {
                    r.read(session, false, b -> out.write(b.bytes()));
                }
            }));
        }
        long from = nanos("from", q.get("from"));
        long to = nanos("to", q.get("to"));
        if (to <= from) throw new StageHttp.HttpProblem(400, "to " + q.get("to") + " is not after from " + q.get("from"));
        RangeExport.Plan plan;
        try (RawSessionReader r = reader()) {
            plan = RangeExport.plan(r, session, false, from, to);
        } catch (RawSessionReader.Unavailable e) {
            throw new StageHttp.HttpProblem(404, e.getMessage());
        }
        if (plan.inRange() == 0) {
            throw new StageHttp.HttpProblem(404, "session " + session + " has no event from " + q.get("from") + " to " + q.get("to"));
        }
        return StageHttp.Response.streamed(CONTENT_TYPE, body(name, out -> {
            try (RawSessionReader r = reader()) {
                RangeExport.write(r, session, false, plan, out);
            }
        }));
    }

    private RawSessionReader reader() {
        return new RawSessionReader(bootstrap, topicPrefix, clientConfig);
    }

    private interface Writer {
        void write(OutputStream out) throws IOException;
    }

    private static StageHttp.Body body(String name, Writer w) {
        return new StageHttp.Body() {
            @Override
            public String fileName() {
                return name;
            }

            @Override
            public void writeTo(OutputStream out) throws IOException {
                w.write(out);
            }
        };
    }

    /** An ISO-8601 instant, or Unix milliseconds, as Unix nanoseconds. */
    static long nanos(String name, String value) {
        try {
            if (value.matches("\\d{1,15}")) return Long.parseLong(value) * 1_000_000L;
            Instant i = Instant.parse(value);
            return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L), i.getNano());
        } catch (DateTimeParseException | ArithmeticException e) {
            throw new StageHttp.HttpProblem(400, name + ": '" + value + "' is neither an ISO-8601 instant nor Unix milliseconds");
        }
    }

    /** HOST-LOGGER-START.etl, the logger's name kept to what any file system takes. */
    public static String fileName(String session) {
        int first = session.indexOf(':');
        int last = session.lastIndexOf(':');
        String logger = session.substring(first + 1, last).replaceAll("[^A-Za-z0-9._-]", "_");
        return session.substring(0, first).replaceAll("[^A-Za-z0-9._-]", "_") + "-" + logger + "-" + session.substring(last + 1) + ".etl";
    }
}
