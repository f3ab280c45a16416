package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchBatch;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.etw.BufferDecoder;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded mutation of single buffers (byte flips, truncation, a scrambled buffer header, an event
 * size rewritten, zeros). Seeded rather than Jazzer: the same cases every run, inside the unit
 * suite, on a machine where Jazzer's native agent is not known to load. Nothing but the format's
 * own error escapes the decoder; through the decode stage, a bad buffer is a dead letter with its
 * reason and the rest of the session is decoded.
 */
class BufferFuzzTest {
    static final int SIZE = 64 * 1024;
    @TempDir Path dir;

    byte[] trace(String mode) throws Exception {
        Path f = dir.resolve(mode + ".etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(6000).withMode(mode), 0x28);
        return Files.readAllBytes(f);
    }

    /** One of five ways a buffer goes bad; some leave it well formed (a flipped payload byte), as they may. */
    static byte[] mutate(byte[] buffer, Random r) {
        byte[] b = buffer.clone();
        switch (r.nextInt(5)) {
            case 0 -> {
                for (int i = 1 + r.nextInt(16); i > 0; i--) b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
            }
            case 1 -> b = Arrays.copyOf(b, r.nextInt(b.length));
            case 2 -> {
                for (int i = 0; i < 72; i++) b[i] = (byte) r.nextInt(256);
            }
            case 3 -> {
                // the size field of an event header somewhere after the buffer header
                int at = 72 + r.nextInt(Math.max(1, b.length - 80)) & ~7;
                ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putShort(at, (short) r.nextInt(65536));
            }
            default -> Arrays.fill(b, r.nextInt(b.length), b.length, (byte) 0);
        }
        return b;
    }

    /** Buffer after buffer of a session, some of them mutated, through the stage's own per-buffer steps. */
    @Test
    void nothingButTheFormatsOwnErrorLeavesTheDecoder() throws Exception {
        int cases = 0;
        int refused = 0;
        for (String mode : List.of("compact", "cswitch")) {
            byte[] file = trace(mode);
            int n = file.length / SIZE;
            for (int seed = 0; seed < 300; seed++) {
                Random r = new Random(seed);
                SessionDecoder decoder = new SessionDecoder("h", null, b -> { }, t -> { }, 64, io.swapstream.decode.merge.MergeLimits.live());
                BufferDecoder buffer = new BufferDecoder();
                for (int i = 0; i < n; i++) {
                    byte[] b = DecodeTopologyTest.buffer(file, i);
                    boolean bad = i > 0 && r.nextInt(4) == 0;
                    if (bad) b = mutate(b, r);
                    try {
                        buffer.load("fuzz buffer " + i, (long) i * SIZE, b, 0, b.length);
                        SessionDecoder.check(buffer);
                        decoder.onBuffer(buffer, (long) i * SIZE, "fuzz buffer " + i);
                    } catch (EtlFormatException e) {
                        assertTrue(bad, "an untouched buffer refused: " + e.getMessage());
                        assertTrue(e.getMessage().contains("fuzz buffer " + i), e.getMessage());
                        refused++;
                    }
                    cases += bad ? 1 : 0;
                }
                decoder.finish();
            }
        }
        assertTrue(cases > 500 && refused > cases / 4, cases + " mutated buffers, " + refused + " refused");
    }

    @Test
    void throughTheDecodeStageABadBufferIsADeadLetterAndTheRestIsDecoded() throws Exception {
        byte[] file = trace("compact");
        int n = file.length / SIZE;
        DecodeTopologyTest setup = new DecodeTopologyTest();
        setup.dir = dir;
        long clean;
        String session;
        {
            long[] count = {0};
            Path f = dir.resolve("compact.etl");
            session = SessionDecoder.decodeBatches(f, "h", null, b -> count[0] += b.count(), null).session().session();
            clean = count[0];
        }
        for (int seed = 0; seed < 12; seed++) {
            Random r = new Random(1000 + seed);
            Map<Integer, byte[]> mutated = new TreeMap<>();
            for (int k = 1 + r.nextInt(3); k > 0; k--) {
                int i = 1 + r.nextInt(n - 1);
                mutated.put(i, mutate(DecodeTopologyTest.buffer(file, i), r));
            }
            try (TopologyTestDriver driver = setup.driver("fuzz" + seed, Map.of())) {
                TestInputTopic<String, byte[]> raw = DecodeTopologyTest.rawBuffers(driver);
                for (int i = 0; i < n; i++) {
                    raw.pipeInput(DecodeTopologyTest.record(session, mutated.getOrDefault(i, DecodeTopologyTest.buffer(file, i)), i, false));
                }
                raw.pipeInput(DecodeTopologyTest.record(session, new byte[0], n, true));
                List<TestRecord<String, byte[]>> letters = DecodeTopologyTest.deadLetters(driver);
                assertTrue(letters.size() <= mutated.size(), "seed " + seed + ": only bad buffers are dead letters");
                for (TestRecord<String, byte[]> l : letters) {
                    String why = DecodeTopologyTest.header(l, SwapstreamConfig.HEADER_ERROR);
                    assertTrue(why != null && why.contains(" buffer "), "a reason naming the buffer: " + why);
                    assertTrue(mutated.keySet().stream().anyMatch(i -> why.contains("buffer " + i)), why);
                }
                List<TraceSession> s = DecodeTopologyTest.sessions(driver);
                TraceSession end = s.get(s.size() - 1);
                assertEquals("end-marker", String.valueOf(end.getEndReason()), "seed " + seed);
                assertEquals(letters.size(), end.getDeadLetters(), "seed " + seed);
                assertEquals(letters.isEmpty(), end.getComplete(), "seed " + seed);
                long switches = DecodeTopologyTest.batches(driver).stream().mapToLong(SwitchBatch::count).sum();
                assertEquals(switches, (long) end.getSwitchCount());
                // the buffers around the bad ones are decoded: at most the bad buffers' share is missing
                assertTrue(switches >= clean * (n - mutated.size() - 1) / n, "seed " + seed + ": " + switches + " of " + clean);
                assertEquals(0, DecodeTopologyTest.count(driver, 'r') + DecodeTopologyTest.count(driver, 'c'), "no state is left");
            }
        }
    }
}
