package io.swapstream.decode.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.etw.BufferHeader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.SwapstreamConfig;
import io.swapstream.schemas.avro.TraceSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Inputs made to stop the stage (issue 52): a compressed buffer whose match length wraps an int, a
 * decompression bomb, a record whose host header has no value. Each is a dead letter with its reason;
 * every other session is decoded exactly as offline.
 */
class HostileInputTest {
    @TempDir Path dir;

    /**
     * Buffer {@code plain}'s header, marked compressed, over 15 bytes of XPRESS: a literal, then a match of
     * distance 1 whose 32-bit length is {@code length32}. It claims the buffer's own fill mark, or {@code fill}.
     */
    static byte[] crafted(byte[] plain, int fill, long length32) {
        ByteBuffer b = ByteBuffer.allocate(BufferHeader.SIZE + 15).order(ByteOrder.LITTLE_ENDIAN);
        b.put(plain, 0, BufferHeader.SIZE);
        int flags = b.getShort(0x34) | BufferHeader.FLAG_COMPRESSED;
        b.putInt(0, BufferHeader.SIZE + 15).putShort(0x34, (short) flags);
        if (fill > 0) b.putInt(0x30, fill);
        b.putInt(0x48, 0x40000000).put(0x4C, (byte) 0).putShort(0x4D, (short) 7).put(0x4F, (byte) 0x0F).put(0x50, (byte) 0xFF)
                .putShort(0x51, (short) 0).putInt(0x53, (int) length32);
        return b.array();
    }

    @Test
    void noCraftedBufferOrValuelessHeaderStopsTheStage() throws Exception {
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(3000), 0x52);
        byte[] file = Files.readAllBytes(f);
        int n = file.length / DecodeTopologyTest.SIZE;
        long[] offline = {0};
        SessionDecoder.decodeBatches(f, "h", null, b -> offline[0] += b.count(), null);
        String victim = "victim:log:1";
        String bomb = "bomb:log:1";
        String other = "other:log:1";
        DecodeTopologyTest setup = new DecodeTopologyTest();
        setup.dir = dir;
        try (TopologyTestDriver driver = setup.driver("hostile", Map.of())) {
            TestInputTopic<String, byte[]> raw = DecodeTopologyTest.rawBuffers(driver);
            for (int i = 0; i < n; i++) {
                byte[] b = DecodeTopologyTest.buffer(file, i);
                // the victim's buffer 2 wraps an int; the bomb's buffers from 1 each claim 1 MiB of zeros, 16 times its
                // logger's BufferSize, and 64 MiB from 3 on, more than any logger writes
                int claim = i < 3 ? 1 << 20 : 64 << 20;
                raw.pipeInput(DecodeTopologyTest.record(victim, i == 2 ? crafted(b, 0, 0x7FFFFFFDL) : b, i, false));
                raw.pipeInput(DecodeTopologyTest.record(bomb, i == 0 ? b : crafted(b, claim, claim - 0x48 - 4), i, false));
                raw.pipeInput(DecodeTopologyTest.record(other, b, i, false));
            }
            TestRecord<String, byte[]> valueless = DecodeTopologyTest.record("nohost:log:1", DecodeTopologyTest.buffer(file, 0), 0, false);
            valueless.headers().remove(SwapstreamConfig.HEADER_HOST);
            valueless.headers().add(SwapstreamConfig.HEADER_HOST, null);
            raw.pipeInput(valueless);
            for (String s : List.of(victim, bomb, other)) raw.pipeInput(DecodeTopologyTest.record(s, new byte[0], n, true));

            List<TestRecord<String, byte[]>> letters = DecodeTopologyTest.deadLetters(driver);
            assertEquals(1 + (n - 1) + 1, letters.size(), "the victim's buffer, the bomb's, the valueless header");
            for (TestRecord<String, byte[]> r : letters) {
                String why = DecodeTopologyTest.header(r, SwapstreamConfig.HEADER_ERROR);
                switch (r.key()) {
                    case "victim:log:1" -> assertTrue(why.contains("victim:log:1 buffer 2: byte offset")
                            && why.contains("corrupt compressed buffer (XPRESS LZ77): match of 2147483648 bytes runs past"), why);
                    case "bomb:log:1" -> assertTrue(why.contains("claims 1048576 bytes uncompressed, more than its logger's buffer size 65536")
                            || why.contains("compressed buffer claims 67108864 bytes uncompressed"), why);
                    case "nohost:log:1" -> assertEquals("header 'host' has no value", why);
                    default -> throw new AssertionError(r.key() + ": " + why);
                }
            }

            Map<String, Long> rows = new java.util.TreeMap<>();
            driver.createOutputTopic("etw.switch-batches", new StringDeserializer(), new SwitchBatchSerde()).readRecordsToList()
                    .forEach(r -> rows.merge(r.key(), (long) r.value().count(), Long::sum));
            assertEquals(offline[0], rows.get(other), "the other session decodes exactly as offline");
            assertTrue(rows.get(victim) < offline[0], "the victim's session goes on without its buffer 2");
            Map<String, TraceSession> ends = new java.util.HashMap<>();
            driver.createOutputTopic("etw.sessions", new StringDeserializer(),
                    new io.swapstream.schemas.serde.SingleObjectAvroSerde<>(TraceSession.class)).readRecordsToList()
                    .forEach(r -> ends.put(r.key(), r.value()));
            assertTrue(ends.get(other).getComplete());
            assertFalse(ends.get(victim).getComplete());
            assertEquals(1, ends.get(victim).getDeadLetters());
            assertEquals(n - 1, ends.get(bomb).getDeadLetters());
            assertFalse(ends.containsKey("nohost:log:1"), "nothing of it was taken");
        }
    }
}
