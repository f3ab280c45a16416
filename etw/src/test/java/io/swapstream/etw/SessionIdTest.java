package io.swapstream.etw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Session ids no name can make ambiguous, and the stream that tells two recordings under one id apart. */
class SessionIdTest {
    static LogfileHeader header(String logger, long startTime, long bootTime, int buffersWritten, long endTime) {
        return new LogfileHeader(65536, 10, 0, 1, 8, 19041, 4, endTime, 156250, 0, 0x1, buffersWritten, 0, 8, 0, 2904, bootTime,
                10_000_000L, startTime, 1, 0, logger, "C:\\traces\\web01.etl", 0);
    }

    @Test
    void aLoggersColonSlashAndPercentAreEscaped() {
        assertEquals("web01:NT Kernel Logger:7", header("NT Kernel Logger", 7, 1, 0, 0).sessionId("web01"));
        assertEquals("web01:a%3Ab%2Fc%25d:7", header("a:b/c%d", 7, 1, 0, 0).sessionId("web01"));
        // without the escape, host "a" and logger "b:c" would share "a:b:c:7" with host "a:b" and logger "c"
        assertNotEquals(header("b:c", 7, 1, 0, 0).sessionId("a"), header("c", 7, 1, 0, 0).sessionId("a%3Ab"));
        assertEquals(-1, header("x/y", 7, 1, 0, 0).sessionId("web01").indexOf('/'));
    }

    @Test
    void aHostThatCannotBeginASessionIdIsNamed() {
        assertNull(LogfileHeader.hostProblem("web01.example.com"));
        assertNull(LogfileHeader.hostProblem("DB-07"));
        assertTrue(LogfileHeader.hostProblem("a:b").contains("holds ':'"));
        assertTrue(LogfileHeader.hostProblem("a/b").contains("holds '/'"));
        assertTrue(LogfileHeader.hostProblem("a%3Ab").contains("holds '%'"));
        assertTrue(LogfileHeader.hostProblem("a\nb").contains("control character"));
        assertTrue(LogfileHeader.hostProblem("").contains("empty"));
        assertTrue(LogfileHeader.hostProblem("x".repeat(300)).contains("longer than 255"));
    }

    @Test
    void theStreamIsTheRecordingsNotWhatTheStopRewrites() {
        String s = header("NT Kernel Logger", 7, 1, 0, 0).stream();
        assertEquals(16, s.length());
        // the kernel rewrites the end time and counts when the logger stops: the same recording
        assertEquals(s, header("NT Kernel Logger", 7, 1, 500, 99).stream());
        // another boot, start or logger under the same id: another recording
        assertNotEquals(s, header("NT Kernel Logger", 7, 2, 0, 0).stream());
        assertNotEquals(s, header("NT Kernel Logger", 8, 1, 0, 0).stream());
        assertNotEquals(s, header("Swapstream", 7, 1, 0, 0).stream());
    }
}
