package io.swapstream.ingest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The collection script's last word (windows/swapstream-collect.ps1 writes {@value WatchedFolder#STATUS_FILE}
 * into the trace folder after every run): when it ran, whether it did what it should, and what its session
 * reported lost. One {@code key=value} a line:
 *
 * <pre>
 * time=2026-11-28T02:10:00Z
 * result=ok
 * session=Swapstream
 * events_lost=0
 * buffers_lost=0
 * message=started swapstream-20261128T021000Z.etl
 * </pre>
 *
 * @param timeMs      when the script ran; null when the file does not say
 * @param ok          whether it did what it should (result=ok)
 * @param eventsLost  EventsLost of the session it stopped or queried; null when not known
 * @param buffersLost LogBuffersLost + RealTimeBuffersLost of that session; null when not known
 * @param message     its one line, for the log
 */
public record CollectorStatus(Long timeMs, boolean ok, Long eventsLost, Long buffersLost, String message) {

    /** The status in {@code dir}, or null when the script has written none (or it cannot be read now). */
    public static CollectorStatus read(Path dir) {
        String text;
        try {
            byte[] b = Files.readAllBytes(dir.resolve(WatchedFolder.STATUS_FILE));
            if (b.length > 64 * 1024) return new CollectorStatus(null, false, null, null, "status file larger than 64 KiB");
            text = new String(b, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            return null; // being rewritten: the next scrape reads it
        }
        return parse(text);
    }

    static CollectorStatus parse(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        // PowerShell's Set-Content -Encoding UTF8 writes a byte order mark in Windows PowerShell 5.1
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        for (String line : text.split("\r?\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) m.put(line.substring(0, eq).trim().toLowerCase(), line.substring(eq + 1).trim());
        }
        Long time = null;
        try {
            if (m.containsKey("time")) time = Instant.parse(m.get("time")).toEpochMilli();
        } catch (DateTimeParseException e) {
            time = null;
        }
        return new CollectorStatus(time, "ok".equalsIgnoreCase(m.get("result")), number(m.get("events_lost")),
                number(m.get("buffers_lost")), m.getOrDefault("message", ""));
    }

    private static Long number(String s) {
        if (s == null) return null;
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
