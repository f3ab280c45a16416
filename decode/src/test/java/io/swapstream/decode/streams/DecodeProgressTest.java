package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.state.StateReader;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A session's progress as release 0.1.0 wrote it reads; what this build writes, 0.1.0 reads. */
class DecodeProgressTest {
    static byte[] stored(String release, String name) throws Exception {
        try (InputStream in = DecodeProgressTest.class.getResourceAsStream("/state/" + release + "/" + name)) {
            return HexFormat.of().parseHex(new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip());
        }
    }

    @Test
    void readsWhatRelease010Wrote() throws Exception {
        DecodeProgress live = DecodeProgress.decode(stored("0.1.0", "decode-progress-live.hex"));
        assertEquals("web01", live.host);
        assertEquals(0x25, live.maxWaitReason);
        assertEquals(1000, live.flushTimerMs);
        assertEquals(42, live.next);
        assertEquals(32, live.checkpointNext);
        assertEquals(655360, live.redoBytes);
        assertEquals(123456, live.switches);
        assertEquals(1764300000000L, live.lastBufferMs);
        assertTrue(!live.ended() && !live.sessionEmitted);
        assertNull(live.stream, "a session 0.1.0 began has no stream: the first that comes claims it");

        DecodeProgress ended = DecodeProgress.decode(stored("0.1.0", "decode-progress-ended.hex"));
        assertEquals("end-marker", ended.endReason);
        assertEquals(1764300060000L, ended.endedMs);
        assertEquals(List.of("buffer 7 of web01.etl: a corrupt buffer"), ended.lossReasons);
        assertEquals(1, ended.deadLetters);
        assertTrue(ended.sessionEmitted);
        assertNull(ended.stream);
    }

    @Test
    void release010ReadsWhatThisBuildWrites() throws Exception {
        DecodeProgress p = DecodeProgress.decode(stored("0.1.0", "decode-progress-live.hex"));
        p.stream = "0123456789abcdef";
        byte[] written = p.encode();
        // 0.1.0 reads its fields in order and leaves the rest of the value: the stream follows all of them
        DecodeProgress.FORMAT.read(written, in -> {
            assertEquals("web01", in.nullableString());
            readRestAsRelease010(in);
            assertTrue(in.remaining() > 0);
            return null;
        });
        DecodeProgress again = DecodeProgress.decode(written);
        assertEquals("0123456789abcdef", again.stream);
        assertEquals(p.next, again.next);
        again.stream = null;
        assertNull(DecodeProgress.decode(again.encode()).stream);
    }

    /** DecodeProgress.decode as release 0.1.0 has it, after the host. */
    private static void readRestAsRelease010(StateReader in) {
        in.nullableInt();
        for (int i = 0; i < 5; i++) in.readLong(); // lateness, flush timer, next, checkpoint's next, checkpoints
        in.readInt();
        for (int i = 0; i < 5; i++) in.readLong(); // redo bytes, switches, batches, threads, dead letters
        for (int n = in.readInt(); n > 0; n--) in.string();
        in.readBoolean();
        in.readLong();
        in.nullableString();
        in.readLong();
    }
}
